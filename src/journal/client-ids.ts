/**
 * The durable record of `client_id`s the journal has seen, so a retry of a
 * create (even after a server restart) finds its first outcome instead of
 * creating a second entry. It is server bookkeeping, not content, so it lives
 * outside the Home: one JSON file per Home under `<data>/state/` (or the
 * local mode's cache folder), named by whoever opens the Home
 * (`keepClientIdsAt`, called by src/vault/vaults.ts). The record is saved
 * BEFORE the Daily note is written: a retry after a crash between the two
 * finds the reserved block id and creates the entry with it.
 *
 * One instance per Home, shared by every request: concurrent creates add to
 * the same records, and saves go out one after another, each with everything
 * recorded so far.
 */
import fs from 'node:fs';
import { AppError } from '../core/errors.js';
import { writeFileAtomic } from '../vault/atomic.js';
import type { Home } from '../vault/home.js';

/**
 * Where versions before the move kept the record, inside the Home. Read once
 * when the state file does not exist yet, and left in place: it is the user's
 * folder, and they may delete it (docs/quire-folder.md).
 */
export const LEGACY_CLIENT_IDS_PATH = '.quire/journal-client-ids.json';
/** Records kept; the oldest go first. */
const MAX_RECORDS = 20_000;

export interface ClientRecord {
  /** `log` for notes_journal_create_log(_batch), `note` for notes_journal_entry_note. */
  kind: 'log' | 'note';
  block_id: string;
  /** Daily note date the entry was created in. */
  date?: string;
  /** For `note`: the linked Note's id and path. */
  note_id?: string;
  note_path?: string;
  at: number;
}

interface FileShape {
  version: 1;
  records: Record<string, ClientRecord>;
}

const files = new WeakMap<Home, string>();
const loaded = new WeakMap<Home, Promise<ClientIds>>();

/** Names the state file of a Home's records; a Home without one keeps them in memory only (tests that build a Vault by hand). */
export function keepClientIdsAt(home: Home, file: string): void {
  files.set(home, file);
}

function parse(text: string): FileShape | null {
  try {
    const parsed = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && parsed.records && typeof parsed.records === 'object') return parsed as FileShape;
  } catch {
    /* unreadable: start empty; the next save replaces it */
  }
  return null;
}

async function readState(file: string): Promise<string | null> {
  try {
    return await fs.promises.readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

async function readLegacy(home: Home): Promise<string | null> {
  try {
    return (await home.read(LEGACY_CLIENT_IDS_PATH)).bytes.toString('utf8');
  } catch (e) {
    if (e instanceof AppError && e.status === 404) return null;
    throw e;
  }
}

export class ClientIds {
  private saving: Promise<void> = Promise.resolve();
  private byBlock: Map<string, string> | null = null;

  private constructor(
    private readonly file: string | null,
    private data: FileShape,
  ) {}

  static load(home: Home): Promise<ClientIds> {
    let p = loaded.get(home);
    if (!p) {
      p = ClientIds.open(home, files.get(home) ?? null);
      loaded.set(home, p);
      p.catch(() => loaded.delete(home));
    }
    return p;
  }

  private static async open(home: Home, file: string | null): Promise<ClientIds> {
    const state = file !== null ? await readState(file) : null;
    const legacy = state === null ? await readLegacy(home) : null;
    const ids = new ClientIds(file, parse(state ?? legacy ?? '') ?? { version: 1, records: {} });
    // Copied at once, so the old file is read this one time and later edits to it change nothing.
    if (legacy !== null) await ids.save();
    return ids;
  }

  private key(kind: ClientRecord['kind'], clientId: string): string {
    return `${kind}:${clientId}`;
  }

  get(kind: ClientRecord['kind'], clientId: string): ClientRecord | undefined {
    return this.data.records[this.key(kind, clientId)];
  }

  /** The client_id that created a block, if any. */
  clientIdOf(blockId: string): string | null {
    if (!this.byBlock) {
      this.byBlock = new Map();
      for (const [k, r] of Object.entries(this.data.records)) if (r.kind === 'log') this.byBlock.set(r.block_id, k.slice(4));
    }
    return this.byBlock.get(blockId) ?? null;
  }

  set(kind: ClientRecord['kind'], clientId: string, rec: Omit<ClientRecord, 'kind'>): void {
    this.data.records[this.key(kind, clientId)] = { kind, ...rec };
    this.byBlock = null;
  }

  /** Writes the record file atomically, after any save still under way. */
  save(): Promise<void> {
    const run = this.saving.then(() => this.write());
    this.saving = run.catch(() => undefined);
    return run;
  }

  private async write(): Promise<void> {
    const entries = Object.entries(this.data.records);
    if (entries.length > MAX_RECORDS) {
      entries.sort((a, b) => b[1].at - a[1].at);
      this.data.records = Object.fromEntries(entries.slice(0, MAX_RECORDS));
      this.byBlock = null;
    }
    if (this.file === null) return;
    await writeFileAtomic(this.file, Buffer.from(JSON.stringify(this.data, null, 1) + '\n', 'utf8'));
  }
}
