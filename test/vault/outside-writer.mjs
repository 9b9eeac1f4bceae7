// An outside program that edits one file while the server writes to it:
// node outside-writer.mjs <file> <append|rename> <count> <tag> <maxPauseMs>
// Each write adds the line `<tag>-<n>`: `append` with appendFileSync (an
// in-place writer: the same inode), `rename` by reading the file, writing a
// temp file and renaming it over the file (a rename-style writer, as vim and
// many editors save). Pauses a random 0..maxPauseMs between writes (5 × maxPauseMs one time in 10). Prints
// the number of writes made.
import fs from 'node:fs';
import path from 'node:path';

const [file, mode, countArg, tag, maxPauseArg] = process.argv.slice(2);
const count = Number(countArg);
const maxPause = Number(maxPauseArg);
const sleeper = new Int32Array(new SharedArrayBuffer(4));
const tmp = path.join(path.dirname(file), `.${path.basename(file)}.outside~`);
let made = 0;
for (let n = 0; n < count; n++) {
  const line = `${tag}-${n}\n`;
  if (mode === 'append') fs.appendFileSync(file, line);
  else {
    const base = fs.readFileSync(file);
    fs.writeFileSync(tmp, Buffer.concat([base, Buffer.from(line)]));
    fs.renameSync(tmp, file);
  }
  made++;
  // Now and then a longer pause, so that some server writes find a quiet moment and succeed.
  const pause = Math.random() < 0.1 ? 5 * maxPause : Math.random() * maxPause;
  if (pause > 0.05) Atomics.wait(sleeper, 0, 0, pause);
}
process.stdout.write(String(made));
