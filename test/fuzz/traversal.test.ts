/**
 * The traversal corpus: 10,000+ spellings of "leave the Home", generated
 * combinatorially (dot-dot forms × separators × depth × target, with
 * prefixes and suffixes), raw and encoded, against every path-taking input
 * of every built action. Canary files sit at every level above the Home and
 * in another user's Home: their text must never appear in an answer, and no
 * file outside the Home and `<data>/state/` may change.
 *
 * In CI every variant is sent at least once (spread over the inputs) and every
 * input gets a fixed sample; FUZZ_RUNS=n gives each input n times the sample,
 * up to the whole corpus.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actionsBuilt, describeFindings, FUZZ_RUNS, startRig, type FuzzRig } from './harness.js';
import { pathSlots, slotRequest, type Slot } from './inputs.js';

const DOTS = [
  '..', '%2e%2e', '%2E%2E', '.%2e', '%2e.', '%252e%252e', '%25252e%25252e', '%u002e%u002e', '%c0%ae%c0%ae', '%e0%80%ae%e0%80%ae',
  '%f0%80%80%ae%f0%80%80%ae', '%c0%2e%c0%2e', '\uff0e\uff0e', '\u3002\u3002', '\u2025', '...', '....', '..%00', '..;', '.. ', ' ..', '..\u200b', '.\u0000.',
];
const SEPS = ['/', '\\', '%2f', '%2F', '%5c', '%5C', '%252f', '%255c', '%c0%af', '%e0%80%af', '%c1%9c', '\u2215', '\uff0f', '%u2215', '%u002f', '//', '\\\\', '/./'];
const PREFIXES = ['', 'Notes/', 'Notes/x/', '/', './', 'C:', 'C:\\', 'c:/', '\\\\?\\', '\\\\server\\share\\', 'file://', '~/', '%2f', '\u0000', 'Sub/', '.obsidian/'];
const SUFFIXES = ['', '%00', '%00.md', '\u0000.md', '?', '#x', '.md', ';.md', '/', '%2f', ' ', '::$DATA'];

/** Relative targets that would reach a canary from `depth` levels above the Home. */
function targetsAt(rig: FuzzRig, depth: number): string[] {
  let up = rig.home;
  for (let i = 0; i < depth; i++) up = path.dirname(up);
  const canaries = rig.canaryFiles.map((f) => path.relative(up, f)).filter((r) => !r.startsWith('..'));
  return [...canaries, path.relative(up, path.join(rig.dataDir, 'state', 'sidecar.json')), 'etc/passwd'].filter((r) => r !== '' && !r.startsWith('..'));
}

export function buildCorpus(rig: FuzzRig): string[] {
  const out = new Set<string>();
  let i = 0;
  for (let depth = 1; depth <= 7; depth++) {
    const targets = targetsAt(rig, Math.min(depth, 8)).concat(depth > 4 ? ['etc/passwd'] : []);
    for (const dots of DOTS) {
      for (const sep of SEPS) {
        for (const target of targets) {
          const climb = (dots + sep).repeat(depth);
          const t = target.split('/').join(sep === '/./' ? '/' : sep);
          const prefix = PREFIXES[i % PREFIXES.length]!;
          const suffix = SUFFIXES[Math.floor(i / PREFIXES.length) % SUFFIXES.length]!;
          out.add(prefix + climb + t + suffix);
          if (i % 7 === 0) out.add(climb + t);
          i++;
        }
      }
    }
  }
  // Absolute forms of every canary, raw and encoded.
  for (const f of [...rig.canaryFiles, '/etc/passwd', path.join(rig.dataDir, 'state', 'sidecar.json')]) {
    const win = 'C:' + f.replace(/\//g, '\\');
    for (const s of [f, f.slice(1), `/${f}`, `file://${f}`, win, `\\\\?\\${win}`, encodeURIComponent(f), f.replace(/\//g, '%2f'), f.replace(/\//g, '\\'), `${f}%00.md`, `Notes/${f}`]) {
      out.add(s);
    }
  }
  return [...out];
}

let rig: FuzzRig;
let corpus: string[];
let before: Map<string, string>;

beforeAll(async () => {
  rig = await startRig({ label: 'traversal' });
  corpus = buildCorpus(rig);
  before = rig.snapshotOutside();
}, 60_000);
afterAll(async () => {
  console.log(rig.summary('traversal'));
  for (const line of describeFindings(rig.findings)) console.log(`  ${line}`);
  await rig.close();
});

/** Percent-decodes once where the string allows it (a body field gets both the raw and the decoded form). */
function decodeOnce(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

describe('the traversal corpus', () => {
  it('has 10,000+ distinct variants', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(10_000);
  });

  it('no path-taking input lets a request read, write or reveal anything outside the Home', async () => {
    const slots = pathSlots(actionsBuilt());
    const perSlot = Math.min(corpus.length, Math.round(150 * FUZZ_RUNS));
    // Every variant once, spread over the inputs, plus a per-input sample (the whole corpus on long runs).
    const jobs: Array<[Slot, string]> = corpus.map((v, i) => [slots[i % slots.length]!, v]);
    for (const [n, slot] of slots.entries()) {
      for (let k = 0; k < perSlot; k++) jobs.push([slot, corpus[(k * 97 + n * 13) % corpus.length]!]);
    }
    let k = 0;
    const worker = async () => {
      for (let j = k++; j < jobs.length; j = k++) {
        const [slot, raw] = jobs[j]!;
        const value = slot.part === 'body' && j % 2 === 1 ? decodeOnce(raw) : raw;
        const res = await rig.send(slot.action.name, slotRequest(slot, value, rig.token()));
        if (res.status === 401) await rig.renewToken();
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));
    console.log(`[fuzz traversal] corpus=${corpus.length} variants, ${slots.length} path-taking inputs of ${new Set(slots.map((s) => s.action.name)).size} actions, ${jobs.length} requests planned`);
    expect(rig.stats.requests).toBeGreaterThanOrEqual(jobs.length);
    expect(rig.writtenOutside(before)).toEqual([]);
    expect(describeFindings(rig.findings.filter((f) => !f.known))).toEqual([]);
  }, 300_000 * Math.max(1, FUZZ_RUNS));
});
