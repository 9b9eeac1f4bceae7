/**
 * The durable record of `client_id`s the journal has seen, so a retry of a
 * create (even after a server restart) finds its first outcome instead of
 * creating a second entry. One small JSON file in the Home,
 * `.quire/journal-client-ids.json`, written atomically through `home.write`.
 * The record is written BEFORE the Daily note: a retry after a crash between
 * the two writes finds the reserved block id and creates the entry with it.
 */
import { AppError } from '../core/errors.js';
import type { Home } from '../vault/home.js';

export const CLIENT_IDS_PATH = '.quire/journal-client-ids.json';
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

export class ClientIds {
  private constructor(
    private readonly home: Home,
    private data: FileShape,
    private etag: string | null,
  ) {}

  static async load(home: Home): Promise<ClientIds> {
    try {
      const { bytes, etag } = await home.read(CLIENT_IDS_PATH);
      let data: FileShape = { version: 1, records: {} };
      try {
        const parsed = JSON.parse(bytes.toString('utf8'));
        if (parsed && typeof parsed === 'object' && parsed.records && typeof parsed.records === 'object') data = parsed;
      } catch {
        /* an unreadable record file is replaced on the next write */
      }
      return new ClientIds(home, data, etag);
    } catch (e) {
      if (e instanceof AppError && e.status === 404) return new ClientIds(home, { version: 1, records: {} }, null);
      throw e;
    }
  }

  private key(kind: ClientRecord['kind'], clientId: string): string {
    return `${kind}:${clientId}`;
  }

  get(kind: ClientRecord['kind'], clientId: string): ClientRecord | undefined {
    return this.data.records[this.key(kind, clientId)];
  }

  private byBlock: Map<string, string> | null = null;

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

  /** Writes the record file (atomic; checked against the version loaded). */
  async save(): Promise<void> {
    const entries = Object.entries(this.data.records);
    if (entries.length > MAX_RECORDS) {
      entries.sort((a, b) => b[1].at - a[1].at);
      this.data.records = Object.fromEntries(entries.slice(0, MAX_RECORDS));
    }
    const text = JSON.stringify(this.data, null, 1) + '\n';
    const r = await this.home.write(CLIENT_IDS_PATH, text, this.etag ? { ifMatch: this.etag } : { ifNoneMatch: '*' });
    this.etag = r.etag;
  }
}
