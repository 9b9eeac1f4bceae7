/**
 * The server never erases what another program writes, even when that
 * program writes in the middle of a server write: many API writers with
 * If-Match race a real outside process that edits the same file, in place
 * (appendFile: the same inode) or rename-style (temp file + rename: a new
 * inode, as vim and many editors save).
 *
 * Every write adds one unique line to what its writer read, so the final
 * file can be checked line by line:
 * - erased outside write: an outside line in neither the file nor a
 *   conflict copy;
 * - lost acknowledged write: an API line answered 2xx but not in the file.
 *   A rename-style outside writer reads, then replaces the whole file, so it
 *   can itself overwrite a server write it did not see (its own
 *   read-modify-write race). Such a write is excused only when the line in
 *   the final file right after the longest common prefix of the final file
 *   and the acknowledged version is an outside line: the outside program
 *   then based its write on an ancestor of the acknowledged version.
 *
 * One gap stays open for rename-style writers: an outside rename that lands
 * in the microseconds between the server's last check and its own rename(2)
 * is replaced (docs/vault-disk.md, "The write flow"). On a loaded machine
 * preemption (or the other rename holding the folder's lock) widens that
 * moment: 9 erased in 30,000 races here, about 1 in 3,300, against about 1
 * in 40 before the check existed. The rename-style test therefore allows
 * at most one erased write per RESIDUAL_RACES races, a bound the old write
 * path fails by a factor of ten.
 *
 * QUIRE_RACES (default 10000) sets the number of outside writes per style.
 */
import { spawn } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import { Home } from '../../src/vault/home.js';
import { TEMP_MARKER } from '../../src/vault/ignore.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { tmpDir } from './helpers.js';

const RACES = Number(process.env.QUIRE_RACES ?? 10_000);
const PER_ROUND = 500;
const WRITERS = 16;
const RESIDUAL_RACES = 500;
const WRITER_SCRIPT = fileURLToPath(new URL('./outside-writer.mjs', import.meta.url));

type Style = 'append' | 'rename';

interface Figures {
  races: number;
  attempts: number;
  acks: number;
  stale412: number;
  erasedOutside: number;
  keptInConflictCopies: number;
  lostAcks: number;
  overwrittenByOutsideRmw: number;
}

const zero = (): Figures => ({ races: 0, attempts: 0, acks: 0, stale412: 0, erasedOutside: 0, keptInConflictCopies: 0, lostAcks: 0, overwrittenByOutsideRmw: 0 });

function add(a: Figures, b: Figures): void {
  for (const k of Object.keys(a) as Array<keyof Figures>) a[k] += b[k];
}

/** Runs the outside writer to completion; resolves with the number of writes it made. */
function outsideWriter(file: string, style: Style, count: number, tag: string, maxPauseMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WRITER_SCRIPT, file, style, String(count), tag, String(maxPauseMs)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(Number(out)) : reject(new Error(`outside writer exited with ${code}: ${err}`))));
  });
}

interface Ack {
  line: string;
  lines: string[];
}

/** Judges the final file of a round (see the file comment). */
function judge(style: Style, tag: string, made: number, finalText: string, copies: string[], acks: Ack[]): Pick<Figures, 'erasedOutside' | 'keptInConflictCopies' | 'lostAcks' | 'overwrittenByOutsideRmw'> {
  const finalLines = finalText.split('\n').filter((l) => l !== '');
  const inFinal = new Set(finalLines);
  const inCopies = new Set(copies.flatMap((c) => c.split('\n')));
  let erasedOutside = 0;
  let keptInConflictCopies = 0;
  for (let n = 0; n < made; n++) {
    const line = `${tag}-${n}`;
    if (inFinal.has(line)) continue;
    if (inCopies.has(line)) keptInConflictCopies++;
    else erasedOutside++;
  }
  let lostAcks = 0;
  let overwrittenByOutsideRmw = 0;
  for (const ack of acks) {
    if (inFinal.has(ack.line)) continue;
    let p = 0;
    while (p < finalLines.length && p < ack.lines.length && finalLines[p] === ack.lines[p]) p++;
    if (style === 'rename' && finalLines[p]?.startsWith(`${tag}-`)) overwrittenByOutsideRmw++;
    else lostAcks++;
  }
  return { erasedOutside, keptInConflictCopies, lostAcks, overwrittenByOutsideRmw };
}

async function conflictCopies(dir: string, name: string): Promise<string[]> {
  const stem = name.replace(/\.md$/, '');
  const names = (await readdir(dir)).filter((n) => n.startsWith(`${stem}.quire-conflict-`));
  return Promise.all(names.map((n) => readFile(path.join(dir, n), 'utf8')));
}

/** One file, WRITERS API writers and one outside writer making `count` writes. */
async function homeRound(home: Home, style: Style, round: number, count: number): Promise<Figures> {
  const name = `Race-${style}-${round}.md`;
  const file = path.join(home.root, name);
  await writeFile(file, 'start\n');
  const tag = `out${round}`;
  const f = zero();
  const acks: Ack[] = [];
  let done = false;
  const outside = outsideWriter(file, style, count, tag, 1).finally(() => (done = true));
  const writers = Array.from({ length: WRITERS }, async (_, w) => {
    for (let i = 0; !done; i++) {
      const cur = await home.read(name);
      const line = `api${round}-${w}-${i}`;
      const text = cur.bytes.toString('utf8') + line + '\n';
      f.attempts++;
      try {
        await home.write(name, text, { ifMatch: cur.etag });
        f.acks++;
        acks.push({ line, lines: text.split('\n').filter((l) => l !== '') });
      } catch (e) {
        if (!(e instanceof AppError) || e.status !== 412) throw e;
        f.stale412++;
      }
    }
  });
  const [made] = await Promise.all([outside, ...writers]);
  await home.settleDisplaced();
  f.races = made;
  Object.assign(f, { ...judge(style, tag, made, await readFile(file, 'utf8'), await conflictCopies(home.root, name), acks), races: made, attempts: f.attempts, acks: f.acks, stale412: f.stale412 });
  return f;
}

function report(label: string, f: Figures): void {
  console.log(
    `[outside-writes] ${label}: ${f.races} races (outside writes during API writes), ${f.attempts} API writes tried, ${f.acks} acknowledged, ${f.stale412} answered 412; ` +
      `erased outside writes ${f.erasedOutside}, kept in conflict copies ${f.keptInConflictCopies}, lost acknowledged writes ${f.lostAcks}, ` +
      `acknowledged writes overwritten by the outside writer's own read-modify-write ${f.overwrittenByOutsideRmw}`,
  );
}

describe.each<Style>(['append', 'rename'])('Home.write racing an outside %s writer', (style) => {
  it(`erases no outside write and loses no acknowledged write over ${RACES} races`, { timeout: 600_000 }, async () => {
    const home = new Home(await tmpDir());
    const total = zero();
    for (let round = 0, left = RACES; left > 0; round++, left -= PER_ROUND) add(total, await homeRound(home, style, round, Math.min(PER_ROUND, left)));
    report(`Home.write, ${style}`, total);
    expect(total.races).toBeGreaterThanOrEqual(RACES);
    expect(total.acks).toBeGreaterThan(0);
    if (style === 'append') expect(total.erasedOutside).toBe(0);
    else expect(total.erasedOutside).toBeLessThanOrEqual(Math.floor(total.races / RESIDUAL_RACES));
    expect(total.lostAcks).toBe(0);
    expect((await readdir(home.root)).filter((n) => n.includes(TEMP_MARKER))).toEqual([]);
  });
});

describe('PUT /api/v1/files/content racing an outside appender (real server on loopback)', () => {
  let inst: TestInstance;
  let token: string;
  let homeDir: string;
  beforeAll(async () => {
    inst = await startInstance();
    token = (await inst.user('rita', 'member')).token;
    homeDir = path.join(inst.dataDir, 'homes', 'rita');
  });
  afterAll(() => inst?.close());

  it('erases no outside write and loses no acknowledged write', { timeout: 300_000 }, async () => {
    const races = Math.max(1000, Math.round(RACES / 10));
    const f = zero();
    for (let round = 0, left = races; left > 0; round++, left -= PER_ROUND) {
      const count = Math.min(PER_ROUND, left);
      const name = `Http-${round}.md`;
      const route = `/api/v1/files/content?path=${encodeURIComponent(name)}`;
      const auth = { authorization: `Bearer ${token}` };
      const created = await inst.api('PUT', route, { token, body: { content: 'start\n' }, headers: { 'if-none-match': '*' } });
      expect(created.status).toBe(201);
      const tag = `out${round}`;
      const acks: Ack[] = [];
      let done = false;
      const outside = outsideWriter(path.join(homeDir, name), 'append', count, tag, 2).finally(() => (done = true));
      const writers = Array.from({ length: WRITERS }, async (_, w) => {
        for (let i = 0; !done; i++) {
          const got = await fetch(inst.url + route, { headers: auth });
          expect(got.status).toBe(200);
          const base = await got.text();
          const line = `api${round}-${w}-${i}`;
          const text = base + line + '\n';
          f.attempts++;
          const put = await inst.api('PUT', route, { token, body: { content: text }, headers: { 'if-match': got.headers.get('etag')! } });
          if (put.status === 200) {
            f.acks++;
            acks.push({ line, lines: text.split('\n').filter((l) => l !== '') });
          } else {
            expect(put.status, put.text).toBe(412);
            expect(put.body.error.details.reason).toBe('etag_mismatch');
            f.stale412++;
          }
        }
      });
      const [made] = await Promise.all([outside, ...writers]);
      f.races += made;
      // The server keeps replaced files aside for its grace period (1 s) before the last check.
      await new Promise((r) => setTimeout(r, 1500));
      add(f, { ...zero(), ...judge('append', tag, made, await readFile(path.join(homeDir, name), 'utf8'), await conflictCopies(homeDir, name), acks) });
    }
    report('HTTP PUT, append', f);
    expect(f.races).toBeGreaterThanOrEqual(races);
    expect(f.acks).toBeGreaterThan(0);
    expect(f.erasedOutside).toBe(0);
    expect(f.lostAcks).toBe(0);
  });
});
