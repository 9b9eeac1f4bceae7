/**
 * The sidecar store: one JSON file (`<data>/state/sidecar.json`) managed by
 * lowdb, written atomically (temp file, fsync, rename). The server and the
 * admin command line may both write it while the server runs, so every
 * transaction takes a cross-process lock and re-reads the file if another
 * process changed it; readers re-read when the file's identity changed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Low, type Adapter } from 'lowdb';
import lockfile from 'proper-lockfile';
import { writeFileAtomic } from '../vault/atomic.js';
import { emptySidecar, type SidecarData } from './schema.js';

class AtomicJsonFile implements Adapter<SidecarData> {
  constructor(private readonly file: string) {}

  async read(): Promise<SidecarData | null> {
    try {
      return JSON.parse(await fs.promises.readFile(this.file, 'utf8')) as SidecarData;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
  }

  async write(data: SidecarData): Promise<void> {
    await writeFileAtomic(this.file, Buffer.from(JSON.stringify(data, null, 1) + '\n', 'utf8'));
  }
}

type Stamp = string;
const stampOf = (st: fs.Stats): Stamp => `${st.ino}:${st.size}:${st.mtimeMs}`;

export class SidecarStore {
  private readonly db: Low<SidecarData>;
  private stamp: Stamp | null = null;
  /** True once this turn of the event loop has looked at the file: one request asks several times (authentication, then its Home). */
  private checkedThisTurn = false;
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(readonly file: string, now: number) {
    this.db = new Low(new AtomicJsonFile(file), emptySidecar(now));
  }

  static async open(file: string, now = Date.now()): Promise<SidecarStore> {
    await fs.promises.mkdir(path.dirname(file), { recursive: true });
    const store = new SidecarStore(file, now);
    await store.transact(() => undefined);
    return store;
  }

  /**
   * A current view of the data. Cheap: one stat per turn of the event loop,
   * and a re-read only if another process wrote. A write by another process
   * is seen from the next turn on.
   */
  snapshot(): Readonly<SidecarData> {
    if (this.checkedThisTurn) return this.db.data;
    let st: fs.Stats;
    try {
      st = fs.statSync(this.file);
    } catch {
      return this.db.data;
    }
    this.checkedThisTurn = true;
    setImmediate(() => (this.checkedThisTurn = false)).unref();
    const stamp = stampOf(st);
    if (stamp !== this.stamp) {
      this.db.data = JSON.parse(fs.readFileSync(this.file, 'utf8')) as SidecarData;
      this.stamp = stamp;
    }
    return this.db.data;
  }

  /**
   * Runs `fn` on the current data under the in-process queue and the
   * cross-process lock, then writes the file if `fn` returned without throwing.
   * A throwing `fn` leaves the file and the in-memory data as they were.
   */
  transact<T>(fn: (data: SidecarData) => T): Promise<T> {
    const run = async (): Promise<T> => {
      const release = await lockfile.lock(this.file, {
        realpath: false,
        stale: 10_000,
        retries: { retries: 200, minTimeout: 5, maxTimeout: 50 },
      });
      try {
        await this.db.read();
        const draft = structuredClone(this.db.data);
        const result = fn(draft);
        this.db.data = draft;
        await this.db.write();
        this.stamp = stampOf(fs.statSync(this.file));
        return result;
      } finally {
        await release();
      }
    };
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => undefined);
    return next;
  }
}
