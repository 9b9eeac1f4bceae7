/**
 * The hostile-input harness's shared parts: a real server on loopback whose
 * data folder sits among canary files, a raw HTTP client (no URL
 * normalisation, so `..` and `%2e` reach the server as sent), the checks
 * every answer must pass, the tree snapshot that proves nothing was written
 * outside the Home and `<data>/state/`, and the summary line.
 *
 * Layout of one run (all under a fresh temp folder `root`):
 *   root/canary.md                 outside the data folder
 *   root/outside/secret.md         outside the data folder, a link target
 *   root/data/canary.md            in the data folder, outside every Home
 *   root/data/homes/vic/...        another user's Home
 *   root/data/homes/<fuzz user>/   the Home under test
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { registry, type AnyAction } from '../../src/actions/registry.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { addUser, issueAdminToken } from '../../src/surfaces/cli/admin.js';

/** Scales every suite: 1 in CI (a few minutes in all); `npm run fuzz` sets more. */
export const FUZZ_RUNS = Math.max(0.01, Number(process.env.FUZZ_RUNS ?? 1) || 1);

/** An answer slower than this counts as a hang (generous: the machine may be loaded). */
export const HANG_MS = 2_000;

/**
 * Findings whose fix is in progress in another area, matched on
 * `<action> <kind>`; their count still shows in the summary. Keep it short and
 * exact; the coordinator empties it once the fixes land.
 */
export const KNOWN_OPEN: ReadonlyArray<{ action: string; kind: FindingKind; why: string }> = [];

export type FindingKind = '5xx' | 'hang' | 'envelope' | 'escape' | 'breach' | 'transport';

export interface Finding {
  kind: FindingKind;
  action: string;
  request: string;
  status: number;
  answer: string;
  known: boolean;
}

export interface Stats {
  requests: number;
  '5xx': number;
  hangs: number;
  escapes: number;
  breaches: number;
  envelope: number;
  transport: number;
  /** Answers by status class (`2xx`, `4xx`, ...): how deep the inputs got. */
  classes: Record<string, number>;
}

export interface RawRequest {
  method: string;
  /** Path and query exactly as they go on the request line. */
  target: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  ms: number;
  hang: boolean;
  error?: string;
}

export const actionsBuilt = (): AnyAction[] => registry.filter((a) => a.handler);

export function canaryText(label: string): string {
  return `CANARY-${label}-${randomBytes(8).toString('hex')}`;
}

export interface FuzzRig {
  server: RunningServer;
  url: string;
  root: string;
  dataDir: string;
  /** The fuzz user's Home. */
  home: string;
  username: string;
  /** Canary strings that must never appear in an answer. */
  canaries: string[];
  /** Files outside the fuzz user's Home whose bytes must never change. */
  canaryFiles: string[];
  /** Live session of the fuzz user (an owner), reissued when an action ends it. */
  token(): string;
  renewToken(): Promise<void>;
  tokens: { readOnly: string; prefix: string };
  stats: Stats;
  findings: Finding[];
  send(action: string, req: RawRequest): Promise<RawResponse>;
  /** Checks one answer: status, envelope, time, canaries. */
  check(action: string, req: RawRequest, res: RawResponse): void;
  record(kind: FindingKind, action: string, req: RawRequest, res: Pick<RawResponse, 'status' | 'text'>): void;
  snapshotOutside(): Map<string, string>;
  /** Differences between a snapshot and now, and changed canary files. */
  writtenOutside(before: Map<string, string>): string[];
  summary(suite: string): string;
  close(): Promise<void>;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

function rawRequest(base: URL, req: RawRequest): Promise<RawResponse> {
  const started = performance.now();
  return new Promise((resolve) => {
    let done = false;
    const finish = (r: Omit<RawResponse, 'ms'>) => {
      if (done) return;
      done = true;
      resolve({ ...r, ms: performance.now() - started });
    };
    let r: http.ClientRequest;
    try {
      r = http.request(
        { host: base.hostname, port: base.port, method: req.method, path: req.target, headers: req.headers, agent },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          const sse = (res.headers['content-type'] ?? '').startsWith('text/event-stream');
          res.on('data', (c: Buffer) => {
            chunks.push(c);
            size += c.length;
            // An event stream never ends by itself: its first bytes are the answer.
            if (sse) {
              res.destroy();
              finish({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8'), hang: false });
            }
          });
          res.on('end', () => finish({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks, size).toString('utf8'), hang: false }));
          res.on('error', (e) => finish({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8'), hang: false, error: String(e) }));
          if (sse) setTimeout(() => {
            res.destroy();
            finish({ status: res.statusCode ?? 0, headers: res.headers, text: '', hang: false });
          }, 200).unref();
        },
      );
    } catch (e) {
      // Node refuses to send some request lines (spaces, control characters): nothing reached the server.
      finish({ status: -1, headers: {}, text: '', hang: false, error: String(e) });
      return;
    }
    r.setTimeout(HANG_MS, () => {
      finish({ status: 0, headers: {}, text: '', hang: true });
      r.destroy();
    });
    r.on('error', (e) => finish({ status: 0, headers: {}, text: '', hang: false, error: String(e) }));
    if (req.body !== undefined) r.end(req.body);
    else r.end();
  });
}

/** The spec's envelope: `{ error: { code, message, details? } }`, details an object of strings. */
export function envelopeProblem(text: string): string | null {
  let v: any;
  try {
    v = JSON.parse(text);
  } catch {
    return 'not JSON';
  }
  const e = v?.error;
  if (!e || typeof e !== 'object') return 'no error object';
  if (typeof e.code !== 'string' || e.code === '') return 'no error.code';
  if (typeof e.message !== 'string' || e.message === '') return 'no error.message';
  if (e.details !== undefined) {
    if (!e.details || typeof e.details !== 'object' || Array.isArray(e.details)) return 'details not an object';
    for (const [k, d] of Object.entries(e.details)) if (typeof d !== 'string') return `details.${k} is not a string`;
  }
  return null;
}

function walkTree(dir: string, skip: Set<string>, out: Map<string, string>): void {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const p = path.join(dir, name);
    if (skip.has(p)) continue;
    let st: fs.Stats;
    try {
      st = fs.lstatSync(p);
    } catch {
      continue;
    }
    if (st.isSymbolicLink()) out.set(p, `link ${fs.readlinkSync(p)}`);
    else if (st.isDirectory()) {
      out.set(p, 'dir');
      walkTree(p, skip, out);
    } else out.set(p, `file ${createHash('sha256').update(fs.readFileSync(p)).digest('hex')}`);
  }
}

export async function startRig(opts: { label: string }): Promise<FuzzRig> {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `quire-fuzz-${opts.label}-`)));
  const dataDir = path.join(root, 'data');
  fs.mkdirSync(path.join(root, 'outside'), { recursive: true });
  const canaries: string[] = [];
  const canaryFiles: string[] = [];
  const plant = (file: string, label: string) => {
    const text = canaryText(label);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, `---\ntitle: ${text}\ntags: [canary]\n---\n# ${text}\n\n${text} [[Private]] #canary\n`);
    canaries.push(text);
    canaryFiles.push(file);
  };
  plant(path.join(root, 'canary.md'), 'ROOT');
  plant(path.join(root, 'outside', 'secret.md'), 'OUTSIDE');
  plant(path.join(root, 'outside', 'Notes', 'Deep.md'), 'OUTSIDE-DEEP');
  plant(path.join(dataDir, 'canary.md'), 'DATA');

  const server = await startServer({ dataDir, host: '127.0.0.1', port: 0, log: () => undefined });
  // One address sends everything: the per-address sign-in limits would answer 429 first.
  server.services.config.authRateLimitPerMinute = 1_000_000_000;
  server.services.config.bearerFailureLimitPerMinute = 1_000_000_000;
  const services = server.services;
  const username = 'fuzz';
  const owner = await addUser(services, { username, role: 'owner' });
  await addUser(services, { username: 'vic', role: 'member' });
  plant(path.join(dataDir, 'homes', 'vic', 'Notes', 'Victim.md'), 'VICTIM');
  const home = path.join(dataDir, 'homes', username);
  let token = owner.token;

  const base = new URL(server.url);
  const api = async (method: string, route: string, body?: unknown, tok = token) => {
    const r = await rawRequest(base, {
      method,
      target: route,
      headers: { authorization: `Bearer ${tok}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, body: r.text ? JSON.parse(r.text) : undefined };
  };
  const ap = async (body: object, tok = token) => {
    const r = await api('POST', '/api/v1/auth/app-passwords', body, tok);
    if (r.status !== 201) throw new Error(`app password: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body.password as string;
  };
  const tokens = {
    readOnly: await ap({ name: 'ro', scopes: ['data', 'account', 'admin'].map((scope) => ({ scope, access: 'read' })) }),
    prefix: await ap({ name: 'sub', home_prefix: 'Sub', scopes: [{ scope: 'data', access: 'write' }] }),
  };

  const stats: Stats = { requests: 0, '5xx': 0, hangs: 0, escapes: 0, breaches: 0, envelope: 0, transport: 0, classes: {} };
  const findings: Finding[] = [];
  const statKey: Record<FindingKind, Exclude<keyof Stats, 'classes'>> = {
    '5xx': '5xx',
    hang: 'hangs',
    envelope: 'envelope',
    escape: 'escapes',
    breach: 'breaches',
    transport: 'transport',
  };

  const rig: FuzzRig = {
    server,
    url: server.url,
    root,
    dataDir,
    home,
    username,
    canaries,
    canaryFiles,
    token: () => token,
    async renewToken() {
      // By id: the fuzz user may have renamed itself (update_profile).
      const now = services.store.snapshot().users.find((u) => u.id === owner.user.id)!;
      token = (await issueAdminToken(services, now.username)).token;
    },
    tokens,
    stats,
    findings,
    async send(action, req) {
      stats.requests++;
      let res = await rawRequest(base, req);
      if (res.hang) {
        // Once more before calling it a hang: on a loaded machine one slow answer is noise, two in a row are not.
        stats.requests++;
        res = await rawRequest(base, req);
      }
      rig.check(action, req, res);
      return res;
    },
    record(kind, action, req, res) {
      stats[statKey[kind]]++;
      const known = KNOWN_OPEN.some((k) => k.action === action && k.kind === kind);
      // Enough examples to reproduce; the counts carry the rest.
      if (findings.filter((f) => f.action === action && f.kind === kind).length < 3) {
        const body = req.body === undefined ? '' : ` body=${String(req.body).slice(0, 300)}`;
        findings.push({ kind, action, request: `${req.method} ${req.target.slice(0, 300)}${body}`, status: res.status, answer: res.text.slice(0, 300), known });
      }
    },
    check(action, req, res) {
      if (res.status === -1) return; // never sent
      const cls = res.status === 0 ? 'none' : `${Math.floor(res.status / 100)}xx`;
      stats.classes[cls] = (stats.classes[cls] ?? 0) + 1;
      if (res.hang) return rig.record('hang', action, req, res);
      if (res.status === 0) return rig.record('transport', action, req, { status: 0, text: res.error ?? '' });
      if (res.status >= 500) rig.record('5xx', action, req, res);
      if (res.status >= 400 && req.method !== 'HEAD' && envelopeProblem(res.text) !== null) {
        rig.record('envelope', action, req, { status: res.status, text: `${envelopeProblem(res.text)}: ${res.text}` });
      }
      if (canaries.some((c) => res.text.includes(c))) rig.record('escape', action, req, res);
    },
    snapshotOutside() {
      const skip = new Set([path.join(dataDir, 'state')]);
      // Every user's own Home may change (new users get one); the victim's must not.
      for (const d of fs.existsSync(path.join(dataDir, 'homes')) ? fs.readdirSync(path.join(dataDir, 'homes')) : []) {
        if (d !== 'vic') skip.add(path.join(dataDir, 'homes', d));
      }
      const out = new Map<string, string>();
      walkTree(root, skip, out);
      return out;
    },
    writtenOutside(before) {
      const now = rig.snapshotOutside();
      const diffs: string[] = [];
      for (const [p, v] of now) if (before.get(p) !== v) diffs.push(`${before.has(p) ? 'changed' : 'created'} ${path.relative(root, p)}`);
      for (const p of before.keys()) if (!now.has(p)) diffs.push(`removed ${path.relative(root, p)}`);
      return diffs;
    },
    summary(suite) {
      const open = findings.filter((f) => !f.known).length;
      return (
        `[fuzz ${suite}] requests=${stats.requests} 5xx=${stats['5xx']} hangs=${stats.hangs} escapes=${stats.escapes} ` +
        `breaches=${stats.breaches} envelope=${stats.envelope} transport=${stats.transport} ` +
        `[${Object.entries(stats.classes).sort().map(([k, v]) => `${k}=${v}`).join(' ')}] (FUZZ_RUNS=${FUZZ_RUNS}; ${open} open, ${findings.length - open} known)`
      );
    },
    async close() {
      await server.close();
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
  return rig;
}

/** Findings as lines, for the failure message and the log. */
export function describeFindings(findings: Finding[]): string[] {
  return findings.map((f) => `${f.known ? '(known) ' : ''}${f.kind} ${f.action}: ${f.request} -> ${f.status} ${f.answer}`);
}
