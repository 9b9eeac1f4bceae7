/**
 * Every built action of the catalog gets a few hundred inputs generated from
 * its own schemas (mostly valid, a share invalid, some bodies not JSON at
 * all) on a real server. Each answer must be below 500, carry the error
 * envelope when it is an error, come within HANG_MS, and show no canary; at
 * the end nothing outside the Home and `<data>/state/` has changed. A share
 * of the calls go with a read-only App Password or no token at all: those
 * must never be answered as if authorized, and one in ten with an App
 * Password limited to `Sub/`, which must never be shown a note under Notes/.
 *
 * FUZZ_RUNS scales the inputs per action (300 × FUZZ_RUNS); FUZZ_SEED
 * replays a run (the seed is printed with the summary).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyAction } from '../../src/actions/registry.js';
import { partsOf, type Pools } from './arbitraries.js';
import { actionsBuilt, canaryText, describeFindings, FUZZ_RUNS, startRig, type FuzzRig } from './harness.js';
import { toRequest } from './inputs.js';

const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
const PER_ACTION = Math.max(1, Math.round(300 * FUZZ_RUNS));

/** docs/api-conventions.md, "Roles": the destructive account actions a read-only credential may still call. */
const READ_IS_ENOUGH = new Set(['approve', 'assert_start', 'assert_finish', 'oidc_reauth_start', 'sign_out', 'cli_logout', 'revoke_session', 'revoke_all']);

let rig: FuzzRig;
let pools: Pools;
let before: Map<string, string>;
/** In every note the setup writes under Notes/: the `home_prefix: "Sub"` App Password must never be shown it. */
const outsidePrefix = canaryText('OUTSIDE-PREFIX');

/** Collects the ids, paths and tags an answer names, so later inputs can name real things. */
function harvest(v: any, into: Pools): void {
  if (!v || typeof v !== 'object') return;
  if (Array.isArray(v)) return v.forEach((x) => harvest(x, into));
  for (const [k, x] of Object.entries(v)) {
    if (typeof x === 'string') {
      if (k === 'path') into.paths.push(x);
      else if (k === 'block_id') into.blockIds.push(x);
      else if (k === 'task_id') into.taskIds.push(x);
      else if (k === 'id') into.noteIds.push(x);
    } else if (k === 'tags' && Array.isArray(x)) into.tags.push(...x.filter((t) => typeof t === 'string'));
    else harvest(x, into);
  }
}

beforeAll(async () => {
  rig = await startRig({ label: 'schema' });
  pools = { paths: [], noteIds: [], blockIds: [], taskIds: [], tags: [], userIds: [] };
  const call = async (method: string, target: string, body?: unknown) => {
    const r = await rig.send('setup', {
      method,
      target,
      headers: { authorization: `Bearer ${rig.token()}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    try {
      harvest(JSON.parse(r.text), pools);
    } catch {
      /* not JSON */
    }
  };
  for (const title of ['Alpha', 'Beta', 'Gamma'])
    await call('POST', '/api/v1/notes', { title, body: `Hello [[Beta]] #fuzz/${title.toLowerCase()} ${outsidePrefix}\n\n- [ ] a task for ${title} ^t${title.length}\n` });
  await call('POST', '/api/v1/notes/journal/log', { text: 'a log entry #fuzz', timezone: 'UTC' });
  await call('POST', '/api/v1/notes/journal/log', { text: '- [ ] a task in the log', timezone: 'UTC' });
  await call('GET', '/api/v1/notes/tasks');
  await call('GET', '/api/v1/notes/journal/entries/x');
  const users = await rig.send('setup', { method: 'GET', target: '/api/v1/auth/users', headers: { authorization: `Bearer ${rig.token()}` } });
  // Other users only: the fuzz user disabling or demoting itself would only test the last-owner rule over and over.
  pools.userIds = JSON.parse(users.text).items.filter((u: any) => u.username !== rig.username).map((u: any) => u.id);
  for (const k of ['paths', 'noteIds', 'blockIds', 'taskIds', 'tags'] as const) pools[k] = [...new Set(pools[k])];
  before = rig.snapshotOutside();
}, 60_000);
afterAll(async () => {
  console.log(`${rig.summary('schema')} seed=${SEED}`);
  for (const line of describeFindings(rig.findings)) console.log(`  ${line}`);
  await rig.close();
});

function credentialFor(i: number): 'owner' | 'readOnly' | 'prefix' | 'none' {
  if (i % 20 === 19) return 'none';
  if (i % 10 === 9) return 'readOnly';
  if (i % 10 === 4) return 'prefix';
  return 'owner';
}

async function fuzzAction(action: AnyAction, n: number): Promise<void> {
  const samples = fc.sample(partsOf(action, pools), { numRuns: n, seed: SEED });
  const scoped = action.scopes.some((s: string) => s !== 'none');
  const needsWrite = action.effect === 'destructive' && !READ_IS_ENOUGH.has(action.name);
  for (const [i, parts] of samples.entries()) {
    const who = credentialFor(i);
    const token = { owner: rig.token(), readOnly: rig.tokens.readOnly, prefix: rig.tokens.prefix, none: null }[who];
    const req = toRequest(action, parts, token);
    if (parts.rawBody !== undefined && action.input.body) {
      req.body = parts.rawBody;
      req.headers = { ...req.headers, 'content-type': 'application/json' };
    }
    if (parts.contentType !== undefined && req.body !== undefined) req.headers = { ...req.headers, 'content-type': parts.contentType };
    const res = await rig.send(action.name, req);
    if (res.status === -1) continue;
    // Answered as if authorized: a success where the documented matrix says 401 or 403.
    const ok = res.status >= 200 && res.status < 400;
    if (ok && scoped && (who === 'none' || (who === 'readOnly' && needsWrite))) rig.record('breach', action.name, req, res);
    if (who === 'prefix' && res.text.includes(outsidePrefix)) rig.record('breach', action.name, req, res);
    if (res.status === 401 && who === 'owner') await rig.renewToken();
  }
}

describe('schema-driven inputs to every built action', () => {
  it('the checks catch a 5xx, a bare error, a slow answer and a canary', () => {
    const saved = { stats: { ...rig.stats, classes: { ...rig.stats.classes } }, findings: rig.findings.length };
    const req = { method: 'GET', target: '/x' };
    const answer = (status: number, text: string, hang = false) => ({ status, headers: {}, text, ms: 1, hang });
    rig.check('probe', req, answer(500, '{"error":{"code":"internal","message":"x"}}'));
    rig.check('probe', req, answer(400, 'Bad Request'));
    rig.check('probe', req, answer(404, '{"error":{"code":"not_found","message":"x","details":{"n":1}}}'));
    rig.check('probe', req, answer(0, '', true));
    rig.check('probe', req, answer(200, `... ${rig.canaries[0]} ...`));
    expect(rig.stats).toMatchObject({ '5xx': saved.stats['5xx'] + 1, envelope: saved.stats.envelope + 2, hangs: saved.stats.hangs + 1, escapes: saved.stats.escapes + 1 });
    Object.assign(rig.stats, saved.stats);
    rig.findings.length = saved.findings;
  });

  it(`${PER_ACTION} inputs per action: no 5xx, the envelope on every error, no hang, no escape, no breach`, async () => {
    const actions = actionsBuilt();
    const queue = [...actions];
    // Two actions at a time: the machine has two cores, and the server shares them.
    await Promise.all(
      Array.from({ length: 2 }, async () => {
        for (let a = queue.shift(); a; a = queue.shift()) await fuzzAction(a, PER_ACTION);
      }),
    );
    console.log(`[fuzz schema] ${actions.length} built actions × ${PER_ACTION} inputs`);
    expect(rig.stats.requests).toBeGreaterThanOrEqual(actions.length * PER_ACTION * 0.9);
    expect(rig.writtenOutside(before)).toEqual([]);
    expect(describeFindings(rig.findings.filter((f) => !f.known))).toEqual([]);
  }, 600_000 * Math.max(1, FUZZ_RUNS));
});
