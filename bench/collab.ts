/**
 * The collaboration section of `npm run bench` (docs/benchmarks.md, "Collaboration"), also
 * runnable alone: `npx tsx bench/collab.ts [--clients 50] [--rate 10] [--duration 10] [--documents 200]`.
 *
 * - Fan-out: `clients` HocuspocusProviders on one note, each making `rate` edits per second at
 *   random places. Every edit carries its sender's clock; the latency of an edit to each other
 *   client is the time until that client's document shows it. Goal: p99 ≤ 50 ms at 50 × 10/s.
 * - Memory: `documents` notes opened at once (one provider each); the server's RSS with them
 *   open minus its RSS before. Goal: ≤ 150 MB for 200.
 *
 * The server runs in its own process (bench/collab-server.ts); the clients all run here, so on a
 * small machine their own work (50 documents applying every update) is part of the figure.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { HocuspocusProvider, HocuspocusProviderWebsocket } from '@hocuspocus/provider';
import WebSocket from 'ws';
import * as Y from 'yjs';
import { performance as perf } from 'node:perf_hooks';
import { mb, parseArgs, round, serverChild, sleep } from './lib.js';

interface Server {
  url: string;
  token: string;
  rss(): Promise<number>;
  elu(): Promise<number>;
  close(): Promise<void>;
}

async function startCollabServer(dataDir: string, notes: number): Promise<Server> {
  const nodeArgs = (process.env.QUIRE_BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const s = await serverChild<{ url: string; token: string }>('collab-server.ts', ['--data', dataDir, '--notes', String(notes)], nodeArgs);
  const stats = () => s.ask<{ rss: number; busyMs: number }>('rss');
  return {
    ...s.first,
    /** The server's event-loop busy time so far, ms. */
    elu: async () => (await stats()).busyMs,
    rss: async () => (await stats()).rss,
    close: s.close,
  };
}

async function session(s: Server, id: string): Promise<{ url: string; name: string; token: string }> {
  const r = await fetch(`${s.url}/api/v1/collab/notes/${id}`, { headers: { authorization: `Bearer ${s.token}` } });
  if (r.status !== 200) throw new Error(`collab_note_session answered ${r.status}: ${await r.text()}`);
  return (await r.json()) as { url: string; name: string; token: string };
}

function open(sess: { url: string; name: string; token: string }, socket?: HocuspocusProviderWebsocket): Promise<HocuspocusProvider> {
  return new Promise((resolve, reject) => {
    const ws = socket ?? new HocuspocusProviderWebsocket({ url: sess.url, WebSocketPolyfill: WebSocket });
    const p: HocuspocusProvider = new HocuspocusProvider({
      websocketProvider: ws,
      name: sess.name,
      token: sess.token,
      document: new Y.Doc(),
      onSynced: () => resolve(p),
      onAuthenticationFailed: ({ reason }) => reject(new Error(`refused: ${reason}`)),
    });
    p.attach();
  });
}

const MARK = /~(\d+)\.(\d+)~/g;

/**
 * A typist speaking the Hocuspocus protocol directly: it authenticates with the session's
 * ticket, takes the document once (sync step 2), then sends each edit as a Yjs update made in its
 * own copy of the document, like a client typing offline. What the server fans out to it is not
 * applied: its frames are only scanned for the other typists' markers (Yjs updates carry
 * strings verbatim). Fifty full providers in this process would apply 24,500 updates a second
 * and measure their own saturation, not the server's fan-out (docs/benchmarks.md).
 */
class Typist {
  private readonly doc = new Y.Doc();
  private seq = 0;
  private bodyStart = 0;

  private constructor(
    private readonly ws: WebSocket,
    private readonly name: string,
    private readonly me: number,
    private readonly sentAt: Map<string, number>,
  ) {}

  static connect(sess: { url: string; name: string; token: string }, me: number, sentAt: Map<string, number>, latencies: number[]): Promise<Typist> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(sess.url);
      ws.binaryType = 'nodebuffer';
      const t = new Typist(ws, sess.name, me, sentAt);
      let synced = false;
      ws.on('open', () => {
        ws.send(frame(sess.name, 2, 0, Buffer.from(sess.token, 'utf8')));
        ws.send(frame(sess.name, 0, 0, Y.encodeStateVector(t.doc)));
      });
      ws.on('error', reject);
      ws.on('close', () => reject(new Error(`typist ${me} was disconnected before it synced`)));
      setTimeout(() => reject(new Error(`typist ${me} did not sync within 10 s`)), 10_000).unref();
      ws.on('message', (data: Buffer) => {
        if (synced) {
          const now = performance.now();
          for (const m of data.toString('latin1').matchAll(MARK)) {
            if (Number(m[1]) === me) continue;
            const sent = sentAt.get(`${m[1]}.${m[2]}`);
            if (sent !== undefined) latencies.push(now - sent);
          }
          return;
        }
        const f = readFrame(data);
        if (f.type === 2 && f.sub === 1) reject(new Error('refused'));
        if (f.type === 0 && f.sub === 1) {
          Y.applyUpdate(t.doc, f.payload);
          const initial = t.doc.getText('content').toString();
          t.bodyStart = initial.startsWith('---\n') ? initial.indexOf('\n---\n', 4) + 5 : 0;
          synced = true;
          resolve(t);
        }
      });
    });
  }

  type(): void {
    const text = this.doc.getText('content');
    const id = `${this.me}.${this.seq++}`;
    const sv = Y.encodeStateVector(this.doc);
    this.sentAt.set(id, performance.now());
    // Below the frontmatter (a marker in `id:` would take the note's id away), and never inside
    // one of its own earlier markers (a split marker would read as a lost edit).
    const from = this.bodyStart;
    const current = text.toString();
    let at = from + Math.floor(Math.random() * (current.length - from + 1));
    const tildesBefore = current.slice(from, at).split('~').length - 1;
    if (tildesBefore % 2 === 1) at = current.indexOf('~', at) + 1;
    text.insert(at, `~${id}~`);
    const update = Y.encodeStateAsUpdate(this.doc, sv);
    this.ws.send(frame(this.name, 0, 2, update));
  }

  close(): void {
    this.ws.close();
  }
}

/** lib0's variable-length unsigned integer, as the Hocuspocus and Yjs protocols write it. */
function varUint(n: number): number[] {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push(0x80 | (n & 0x7f));
    n = Math.floor(n / 128);
  }
  out.push(n);
  return out;
}

const bytes = (b: Uint8Array) => [...varUint(b.length), ...b];

/** One Hocuspocus message: document name, message type, then the payload's parts. */
function frame(name: string, type: number, ...parts: Array<number | Uint8Array>): Buffer {
  const out = [...bytes(Buffer.from(name, 'utf8')), ...varUint(type)];
  for (const p of parts) out.push(...(typeof p === 'number' ? varUint(p) : bytes(p)));
  return Buffer.from(out);
}

/** Reads a message's header (name, type, subtype) and, for sync step 2, its update. */
function readFrame(b: Buffer): { type: number; sub: number; payload: Uint8Array } {
  let at = 0;
  const uint = () => {
    let n = 0;
    let mul = 1;
    for (;;) {
      const x = b[at++]!;
      n += (x & 0x7f) * mul;
      if (x < 0x80) return n;
      mul *= 128;
    }
  };
  const nameLength = uint();
  at += nameLength;
  const type = uint();
  const sub = uint();
  const len = type === 0 && sub === 1 ? uint() : 0;
  return { type, sub, payload: b.subarray(at, at + len) };
}

function percentile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

export interface CollabBenchResult {
  fanout: { clients: number; editsPerSecond: number; durationS: number; edits: number; deliveries: number; missing: number; p50: number; p99: number; max: number; clientBusy: number; serverBusy: number; ok: boolean };
  memory: { documents: number; idleMB: number; openMB: number; deltaMB: number; ok: boolean };
}

export async function runCollabBench(opts: { clients?: number; rate?: number; durationS?: number; documents?: number; log?: (s: string) => void } = {}): Promise<CollabBenchResult> {
  const clients = opts.clients ?? 50;
  const rate = opts.rate ?? 10;
  const durationS = opts.durationS ?? 10;
  const documents = opts.documents ?? 200;
  const log = opts.log ?? ((s: string) => console.log(s));
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quire-bench-collab-'));
  const server = await startCollabServer(dataDir, documents);
  try {
    // ---- memory: idle, then every document open at once.
    await sleep(1000);
    const idle = await server.rss();
    const socket = new HocuspocusProviderWebsocket({ url: (await session(server, 'n0')).url, WebSocketPolyfill: WebSocket });
    const many: HocuspocusProvider[] = [];
    for (let i = 0; i < documents; i++) many.push(await open(await session(server, `n${i}`), socket));
    await sleep(2000);
    const withOpen = await server.rss();
    for (const p of many) p.destroy();
    socket.destroy();
    const memory = {
      documents,
      idleMB: mb(idle),
      openMB: mb(withOpen),
      deltaMB: mb(withOpen - idle),
      ok: withOpen - idle <= 150 * 1048576,
    };
    log(`collab memory: ${documents} open documents: RSS ${memory.idleMB} -> ${memory.openMB} MB (+${memory.deltaMB} MB; goal ≤ 150)`);
    await sleep(1500);

    // ---- fan-out: everyone types into one note.
    const sess = await session(server, 'n0');
    const sentAt = new Map<string, number>();
    const latencies: number[] = [];
    const typists: Typist[] = [];
    for (let i = 0; i < clients; i++) typists.push(await Typist.connect(sess, i, sentAt, latencies));
    const elu0 = perf.eventLoopUtilization();
    const serverElu0 = await server.elu();
    let edits = 0;
    const end = performance.now() + durationS * 1000;
    await Promise.all(
      typists.map(async (t) => {
        await sleep(Math.random() * (1000 / rate));
        let next = performance.now();
        while (performance.now() < end) {
          t.type();
          edits++;
          next += 1000 / rate;
          await sleep(Math.max(0, next - performance.now()));
        }
      }),
    );
    const clientElu = perf.eventLoopUtilization(elu0).utilization;
    const serverElu = (await server.elu()) - serverElu0;
    await sleep(2000);
    latencies.sort((a, b) => a - b);
    const expected = edits * (clients - 1);
    const fanout = {
      clients,
      editsPerSecond: rate,
      durationS,
      edits,
      deliveries: latencies.length,
      missing: expected - latencies.length,
      p50: round(percentile(latencies, 0.5), 1),
      p99: round(percentile(latencies, 0.99), 1),
      max: round(latencies[latencies.length - 1] ?? NaN, 1),
      clientBusy: Math.round(clientElu * 100),
      serverBusy: Math.round((serverElu / (durationS * 1000)) * 100),
      ok: percentile(latencies, 0.99) <= 50 && latencies.length === expected,
    };
    log(`collab fan-out: ${clients} clients × ${rate} edits/s for ${durationS} s: ${edits} edits, ${fanout.deliveries}/${expected} deliveries, p50 ${fanout.p50} p99 ${fanout.p99} max ${fanout.max} ms (goal p99 ≤ 50); event loops busy: server ${fanout.serverBusy} %, clients ${fanout.clientBusy} %`);
    for (const t of typists) t.close();
    // The file at rest holds every edit (the last clients leaving write the document back).
    let lost = sentAt.size;
    for (let waited = 0; waited < 15_000 && lost > 0; waited += 500) {
      await sleep(500);
      const r = await fetch(`${server.url}/api/v1/notes/n0`, { headers: { authorization: `Bearer ${server.token}` } });
      const got = (await r.json()) as { body?: string };
      if (typeof got.body !== 'string') throw new Error(`get_note answered ${r.status}: ${JSON.stringify(got).slice(0, 200)}`);
      lost = [...sentAt.keys()].filter((id) => !got.body!.includes(`~${id}~`)).length;
    }
    if (lost > 0) log(`collab fan-out: ${lost} EDITS MISSING FROM THE FILE`);
    return { fanout, memory };
  } finally {
    await server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const args = parseArgs(process.argv.slice(2));
  const num = (k: string) => (args[k] !== undefined ? Number(args[k]) : undefined);
  const r = await runCollabBench({ clients: num('clients'), rate: num('rate'), durationS: num('duration'), documents: num('documents') });
  console.log(JSON.stringify(r, null, 2));
  process.exit(0);
}
