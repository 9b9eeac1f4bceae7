/**
 * Live collaboration on plain files: a Hocuspocus server on the HTTP server's `upgrade` event
 * (path COLLAB_WS_PATH), one Yjs document per open Note whose `getText('content')` is the file's
 * whole text. The file stays the truth:
 *
 * - opening a document replays its history (history.ts) and merges whatever the file says now;
 * - edits are written back through the Home's writer, debounced, atomically, with `If-Match` on
 *   the version last written; a 412 means someone else wrote: their text is merged into the
 *   document (a three-way merge, text-diff.ts) and the write is tried again;
 * - an outside change of the file (the vault's change events: editors, git, other API writes)
 *   is merged into the open document the same way, so connected editors see it;
 * - when the last client leaves, the document is written back and unloaded.
 *
 * Every change is a history point with its author. The hub is one per Services (see `hubOf`).
 */
import type { IncomingMessage, Server } from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import type { Hocuspocus } from '@hocuspocus/server';
import type { WebSocketServer } from 'ws';
// Types only: yjs and the history module load at the first document opened (docs/performance.md, "Start-up").
import type * as Y from 'yjs';
import { paths } from '../core/config.js';
import { AppError } from '../core/errors.js';
import type { Services } from '../core/services.js';
import type { Scope } from '../notes/access.js';
import { etagOf } from '../vault/etag.js';
import type { VaultChange } from '../vault/vault.js';
import { authorKey, authorOfKey, DISK, type Author } from './authors.js';
import type { HistoryLog } from './history.js';
import { fileStem, historyDir } from './history-files.js';
import { docName, parseDocName, type DocRef } from './doc-ref.js';
import { guestMayEdit, guestViewer } from './guest-links.js';
import { ownerScope } from './owner.js';
import { findShare } from './share-store.js';
import { findUserById } from '../store/users.js';
import { TicketKey, type Ticket } from './tickets.js';
import { diffText, merge3 } from './text-diff.js';

/**
 * @hocuspocus/server and ws load at the first connection or server-side change, not when the
 * server starts (docs/performance.md, "Start-up").
 */
const collabServerLibs = () => Promise.all([import('@hocuspocus/server'), import('ws')]);

/** Where providers connect: the same port as the API. */
export const COLLAB_WS_PATH = '/api/v1/collab/ws';

/** Write-back waits this long after the last edit, and never longer than WRITE_MAX_WAIT_MS after the first. */
const WRITE_DEBOUNCE_MS = 300;
const WRITE_MAX_WAIT_MS = 1500;

/** The origin of a change the server makes itself (outside edits, restore, undo). */
export class AuthoredChange {
  constructor(readonly author: Author) {}
}

const LOADING = Symbol('loading');

export { docName, parseDocName, type DocRef } from './doc-ref.js';

/** Applies the edits that turn the text's current content into `next`, last first so positions hold. */
export function setText(text: Y.Text, next: string): void {
  const edits = diffText(text.toString(), next);
  for (let i = edits.length - 1; i >= 0; i--) {
    const e = edits[i]!;
    if (e.del > 0) text.delete(e.pos, e.del);
    if (e.ins) text.insert(e.pos, e.ins);
  }
}

/**
 * Every update goes out to every other client of the document: one WebSocket frame each, and
 * written one by one that is a system call per frame per client (50 typists at 10 edits/s make
 * 24,500 a second, and the calls were most of the server's time). The socket is corked at its
 * first write in an event-loop turn and uncorked after the turn, so all frames a turn produces
 * for one client leave in one write. Nothing waits longer than the turn it was sent in.
 */
function coalesceWrites(socket: Duplex): void {
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
  let corked = false;
  socket.write = ((...args: unknown[]) => {
    if (!corked) {
      corked = true;
      socket.cork();
      setImmediate(() => {
        corked = false;
        socket.uncork();
      });
    }
    return write(...args);
  }) as typeof socket.write;
}

/** One open document bound to its file. */
class Binding {
  /** The file's text and ETag the document last agreed with (what was last written or merged). */
  synced: { etag: string; text: string } = { etag: '', text: '' };
  deleted = false;
  private chain: Promise<void> = Promise.resolve();
  /** ETag of a write under way: its own change event is not an outside edit. */
  private writingEtag: string | null = null;
  private readonly stopWatching: () => void;

  constructor(
    readonly ref: DocRef,
    readonly doc: Y.Doc,
    readonly scope: Scope,
    public path: string,
    readonly log: HistoryLog,
    private readonly syncFile: string,
    private readonly onError: (e: unknown) => void,
    now: () => number,
    private readonly onGone: () => void,
  ) {
    this.stopWatching = scope.vault.onChange((c) => this.onVaultChange(c));
    // Every update is a point, but for the replay of the points themselves.
    doc.on('update', (update: Uint8Array, origin: unknown) => {
      if (origin !== LOADING) log.append(authorKey(authorOfOrigin(origin)), update, now());
    });
  }

  /** The file was deleted: the document stops writing (a deleted file is not brought back) and its editors are let go. */
  private gone(): void {
    if (this.deleted) return;
    this.deleted = true;
    this.onGone();
  }

  get text(): Y.Text {
    return this.doc.getText('content');
  }

  /** Runs `fn` after everything queued before it; the queue survives a failure. */
  enqueue(fn: () => Promise<void>): Promise<void> {
    const run = this.chain.then(fn);
    this.chain = run.catch((e) => this.onError(e));
    return run;
  }

  async load(): Promise<void> {
    const { bytes, etag } = await this.scope.vault.home.read(this.path);
    const file = bytes.toString('utf8');
    let sync: { etag: string; text: string } | null = null;
    try {
      sync = JSON.parse(await fs.promises.readFile(this.syncFile, 'utf8'));
    } catch {
      sync = null;
    }
    if (this.log.points.length === 0) {
      // First opening: the file's text is the first point, by the disk.
      this.doc.transact(() => this.text.insert(0, file), new AuthoredChange(DISK));
      this.synced = { etag, text: file };
      // Kept at once: after a crash before the first write-back, the base of the merge must be known.
      await this.log.flush();
      await this.saveSync();
      return;
    }
    const { applyUpdate } = await import('yjs');
    this.doc.transact(() => {
      for (const p of this.log.points) applyUpdate(this.doc, Buffer.from(p.u, 'base64'));
    }, LOADING);
    const current = this.text.toString();
    const base = sync ?? { etag: '', text: current };
    if (base.etag === etag) {
      this.synced = base;
      return;
    }
    this.synced = { etag, text: file };
    const merged = merge3(base.text, current, file);
    if (merged !== current) this.applyAuthored(merged, DISK);
  }

  applyAuthored(next: string, author: Author): void {
    this.doc.transact(() => setText(this.text, next), new AuthoredChange(author));
  }

  /** Merges the file's new text into the document, keeping edits not yet written. */
  private mergeOutside(file: string, etag: string): void {
    const current = this.text.toString();
    const merged = current === this.synced.text ? file : merge3(this.synced.text, current, file);
    this.synced = { etag, text: file };
    if (merged !== current) this.applyAuthored(merged, DISK);
  }

  private onVaultChange(c: VaultChange): void {
    if (this.deleted) return;
    if (c.kind === 'move') {
      if (c.from === this.path) this.path = c.path;
      return;
    }
    if (c.path !== this.path) return;
    if (c.kind === 'delete') {
      this.gone();
      return;
    }
    if (c.etag === this.synced.etag || c.etag === this.writingEtag) return;
    void this.enqueue(() => this.pullFile());
  }

  /** Reads the file and merges it when it changed since the document last agreed with it. */
  private async pullFile(): Promise<void> {
    if (this.deleted) return;
    let r;
    try {
      r = await this.scope.vault.home.read(this.path);
    } catch (e) {
      if (e instanceof AppError && e.status === 404) {
        this.gone();
        return;
      }
      throw e;
    }
    if (r.etag === this.synced.etag) return;
    this.mergeOutside(r.bytes.toString('utf8'), r.etag);
    if (this.text.toString() !== this.synced.text) await this.writeBackNow();
  }

  writeBack(): Promise<void> {
    return this.enqueue(() => this.writeBackNow());
  }

  /** Writes the document to its file at the version last agreed on; merges and retries on a 412. */
  private async writeBackNow(): Promise<void> {
    if (this.deleted) return;
    // History first: a file is never ahead of the points that made it.
    await this.log.flush();
    for (let attempt = 0; attempt < 8; attempt++) {
      const text = this.text.toString();
      if (text === this.synced.text) return;
      this.writingEtag = etagOf(text);
      try {
        const r = await this.scope.vault.home.write(this.path, text, { ifMatch: this.synced.etag, quotaBytes: this.scope.quotaBytes });
        this.synced = { etag: r.etag, text };
        await this.saveSync();
        return;
      } catch (e) {
        if (!(e instanceof AppError)) throw e;
        if (e.status === 404) {
          // Deleted under us: a deleted file is not brought back by an editor still open.
          this.gone();
          return;
        }
        if (e.status !== 412) throw e;
        const r = await this.scope.vault.home.read(this.path);
        this.mergeOutside(r.bytes.toString('utf8'), r.etag);
      } finally {
        this.writingEtag = null;
      }
    }
    throw new AppError('conflict', `The file ${this.path} kept changing while collaboration wrote it back; it will be tried again`);
  }

  private async saveSync(): Promise<void> {
    const tmp = `${this.syncFile}.${process.pid}.tmp`;
    await fs.promises.mkdir(path.dirname(this.syncFile), { recursive: true });
    await fs.promises.writeFile(tmp, JSON.stringify(this.synced));
    await fs.promises.rename(tmp, this.syncFile);
  }

  async close(): Promise<void> {
    this.stopWatching();
    await this.chain;
    await this.log.flush();
  }
}

function authorOfOrigin(origin: unknown): Author {
  if (origin instanceof AuthoredChange) return origin.author;
  const ctx = (origin as { context?: { author?: Author } } | null)?.context;
  return ctx?.author ?? DISK;
}

export class CollabHub {
  private readonly bindings = new Map<string, Binding>();
  private readonly key: TicketKey;
  /** The Hocuspocus server and the WebSocket server in front of it, made at first use (`start`). */
  private starting: Promise<{ hp: Hocuspocus; wss: WebSocketServer }> | null = null;
  private live: { hp: Hocuspocus; wss: WebSocketServer } | null = null;
  private detach: (() => void) | null = null;

  constructor(
    private readonly services: Services,
    private readonly log: (line: string) => void = () => undefined,
  ) {
    this.key = TicketKey.open(paths.state(services.config));
  }

  /** The Hocuspocus server; there is one once a connection or a change has started it. */
  get hp(): Hocuspocus {
    if (!this.live) throw new Error('collaboration has not started yet');
    return this.live.hp;
  }

  private start(): Promise<{ hp: Hocuspocus; wss: WebSocketServer }> {
    this.starting ??= collabServerLibs().then(([{ Hocuspocus }, { WebSocketServer }]) => {
      const hp = new Hocuspocus({
        quiet: true,
        debounce: WRITE_DEBOUNCE_MS,
        maxDebounce: WRITE_MAX_WAIT_MS,
        // A document is unloaded only once written back (Hocuspocus stores it first).
        unloadImmediately: true,
        onAuthenticate: async ({ token, documentName, connectionConfig }) => {
          const t = this.key.verify(token ?? '', this.now());
          if (!t || t.d !== documentName) throw { reason: 'invalid-ticket' };
          const access = this.accessOf(t);
          if (access === null) throw { reason: 'not-shared' };
          connectionConfig.readOnly = t.ro || access === 'view';
          return { viewer: t.v, author: authorOfKey(t.a) };
        },
        onLoadDocument: async ({ documentName, document }) => {
          await this.bind(documentName, document);
        },
        onStoreDocument: async ({ documentName }) => {
          await this.bindings.get(documentName)?.writeBack();
        },
        afterUnloadDocument: async ({ documentName }) => {
          const b = this.bindings.get(documentName);
          this.bindings.delete(documentName);
          await b?.close();
        },
      });
      this.live = { hp, wss: new WebSocketServer({ noServer: true, maxPayload: 32 * 1024 * 1024 }) };
      return this.live;
    });
    return this.starting;
  }

  private now(): number {
    return Date.now();
  }

  /** Attaches to the HTTP server: upgrades on COLLAB_WS_PATH become collaboration connections. */
  attach(server: Server): void {
    const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      const url = (req.url ?? '').split('?')[0];
      if (url !== COLLAB_WS_PATH) {
        // No other part of the server takes upgrades: answer rather than leave the socket open.
        if (server.listenerCount('upgrade') === 1) socket.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
        return;
      }
      coalesceWrites(socket);
      this.start().then(
        ({ hp, wss }) => wss.handleUpgrade(req, socket, head, (ws) => hp.handleConnection(ws, req)),
        (e) => {
          this.log(`collab: ${(e as Error).message}`);
          socket.destroy();
        },
      );
    };
    server.on('upgrade', onUpgrade);
    this.detach = () => server.off('upgrade', onUpgrade);
  }

  /** The access a ticket's viewer has now (checked at every connect): null when none. */
  private accessOf(t: Ticket): 'view' | 'edit' | null {
    const ref = parseDocName(t.d);
    if (!ref) return null;
    const owner = findUserById(this.services.store, ref.ownerId);
    if (!owner || owner.disabled) return null;
    if (t.v.startsWith('guest:')) return guestMayEdit(this.services.store, t.v, ref, this.now()) ? 'edit' : null;
    const viewer = findUserById(this.services.store, t.v);
    if (!viewer || viewer.disabled) return null;
    if (t.v === ref.ownerId) return 'edit';
    return findShare(this.services.store, ref.ownerId, ref.noteId, t.v)?.access ?? null;
  }

  /** A WebSocket URL, document name and ticket for a HocuspocusProvider. */
  session(ref: DocRef, viewer: string, author: Author, readOnly: boolean) {
    const name = docName(ref);
    const token = this.key.issue({ d: name, v: viewer, a: authorKey(author), ro: readOnly }, this.now());
    const c = this.services.config;
    const base = (c.publicBaseUrl ?? c.listenUrl ?? `http://${c.host}:${c.port}`).replace(/^http/, 'ws');
    return { url: base + COLLAB_WS_PATH, name, token };
  }

  /**
   * A guest editing session on one public link (`edit_session`): a signed token naming the
   * link's slug and the guest, which `collab_public_edit_session` turns into tickets.
   */
  guestSession(slug: string, guest: string, ttlMs: number): { token: string; expiresAt: number } {
    const now = this.now();
    const token = this.key.issue({ d: `guest/${slug}`, v: guestViewer(slug, guest), a: authorKey({ guest, link: slug }), ro: false }, now, ttlMs);
    return { token, expiresAt: now + ttlMs };
  }

  /** The guest a guest-session token names for this slug, or null when forged, expired or for another link. */
  guestOf(token: string, slug: string): string | null {
    const t = this.key.verify(token, this.now());
    return t && t.d === `guest/${slug}` ? t.v.slice(guestViewer(slug, '').length) : null;
  }

  /** Cuts the open connections of one viewer to one document (an unshare takes effect at once). */
  disconnect(ref: DocRef, viewer: string): void {
    const doc = this.live?.hp.documents.get(docName(ref));
    if (!doc) return;
    for (const { connection } of doc.connections.values()) {
      if (connection.context?.viewer === viewer) connection.close({ code: 4403, reason: 'unshared' });
    }
  }

  historyFiles(ref: DocRef): { log: string; sync: string } {
    const dir = historyDir(paths.state(this.services.config), ref.ownerId);
    const stem = fileStem(ref.noteId);
    return { log: path.join(dir, `${stem}.ndjson`), sync: path.join(dir, `${stem}.sync.json`) };
  }

  private async bind(name: string, doc: Y.Doc): Promise<void> {
    const ref = parseDocName(name);
    if (!ref) throw new AppError('not_found', `No collaboration document ${name}`);
    const scope = await ownerScope(this.services, ref.ownerId);
    const note = scope.index.noteById(ref.noteId);
    if (!note) throw new AppError('not_found', `No note with id ${ref.noteId}`);
    const files = this.historyFiles(ref);
    const { HistoryLog } = await import('./history.js');
    const log = await HistoryLog.open(files.log, this.now());
    const onError = (e: unknown) => this.log(`collab ${name}: ${(e as Error)?.message ?? e}`);
    const b = new Binding(ref, doc, scope, note.path, log, files.sync, onError, () => this.now(), () => this.hp.closeConnections(name));
    try {
      await b.load();
    } catch (e) {
      await b.close();
      throw e;
    }
    this.bindings.set(name, b);
    // Edits merged while opening (the file changed while the document was closed) go to the file.
    if (b.text.toString() !== b.synced.text) void b.writeBack();
  }

  /** The open binding of a document, if a client or server-side change has it loaded. */
  open(ref: DocRef): Binding | undefined {
    return this.bindings.get(docName(ref));
  }

  /**
   * Runs `fn` on the document (loading it if no one has it open), then writes it back; the
   * document unloads afterwards unless clients are connected.
   */
  async change(ref: DocRef, author: Author, fn: (text: Y.Text) => void): Promise<{ point: number; etag: string }> {
    const { hp } = await this.start();
    const conn = await hp.openDirectConnection(docName(ref), {});
    try {
      const b = this.bindings.get(docName(ref))!;
      b.doc.transact(() => fn(b.text), new AuthoredChange(author));
      await b.writeBack();
      return { point: b.log.last, etag: b.synced.etag };
    } finally {
      await conn.disconnect();
    }
  }

  /** The history of a document: the live log when open, else read from disk. */
  async history(ref: DocRef): Promise<HistoryLog> {
    const b = this.bindings.get(docName(ref));
    if (b) {
      await b.log.flush();
      return b.log;
    }
    const { HistoryLog } = await import('./history.js');
    return HistoryLog.open(this.historyFiles(ref).log, this.now());
  }

  /** Writes every open document back and closes the connections (server shutdown). */
  async close(): Promise<void> {
    this.detach?.();
    for (const b of this.bindings.values()) await b.writeBack().catch(() => undefined);
    // A start still under way finishes first, so that nothing it opens is left behind.
    const live = this.starting ? await this.starting.catch(() => null) : null;
    live?.hp.closeConnections();
    for (const ws of live?.wss.clients ?? []) ws.terminate();
    for (const b of [...this.bindings.values()]) await b.close();
    this.bindings.clear();
  }
}

const hubs = new WeakMap<Services, CollabHub>();

/** Starts collaboration for a server: the hub, on the HTTP server's upgrades. */
export function attachCollab(server: Server, services: Services, log?: (line: string) => void): CollabHub {
  const hub = new CollabHub(services, log);
  hub.attach(server);
  hubs.set(services, hub);
  return hub;
}

/** The server's hub, or null where none runs. */
export function hubIfAny(services: Services): CollabHub | null {
  return hubs.get(services) ?? null;
}

/** The server's hub; 503 where no server runs one (the command line's local vault mode). */
export function hubOf(services: Services): CollabHub {
  const hub = hubs.get(services);
  if (!hub) throw new AppError('service_unavailable', 'Live collaboration runs only in a server (quire serve)', { details: { reason: 'no_collaboration' } });
  return hub;
}
