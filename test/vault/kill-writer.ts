// A server stand-in that is SIGKILLed mid-write by test/vault/stale-temps.test.ts:
// node --import tsx kill-writer.ts <home>
// Writes 2 MB files, each made of one repeated letter, through Home.write,
// forever, so that a kill at any moment can leave a temp file behind.
import { Home } from '../../src/vault/home.js';

const home = new Home(process.argv[2]!);
for (let i = 0; ; i++) {
  const letter = String.fromCharCode(97 + (i % 26));
  await home.write(`Notes/n${i % 5}.md`, letter.repeat(2 * 1024 * 1024));
  if (i === 0) process.stdout.write('writing\n');
}
