/**
 * A small in-process job runner. A job belongs to one user and has a kind,
 * a state (queued → running → succeeded | failed | cancelled), progress
 * `{ done, total }`, and a result or an error. Jobs run here, a few at a
 * time; cancellation is cooperative (the job function gets an AbortSignal).
 *
 * Job records are kept in `<data>/state/jobs.json` (written atomically on
 * each state change, progress at most once a second), so a restart finds
 * the jobs it interrupted and marks them failed ("interrupted by a server
 * restart") instead of losing them. Each user keeps their last 100 finished
 * jobs. Events (`job` with the record) feed `my_job_events`, which replays
 * them after `Last-Event-ID` within a window (1,000 events, 10 minutes).
 */
import fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import { newId } from '../core/ids.js';
import { writeFileAtomic } from '../vault/atomic.js';

export type JobState = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

export interface JobRecord {
  id: string;
  kind: string;
  state: JobState;
  progress: { done: number; total: number };
  result: unknown;
  error: string | null;
  /** Free-form description for listings (e.g. the rewrite it runs). */
  meta: Record<string, unknown>;
  created_at: number;
  updated_at: number;
}

interface StoredJob extends JobRecord {
  owner: string;
}

export interface JobContext {
  id: string;
  signal: AbortSignal;
  progress(done: number, total?: number): void;
}

export type JobFn = (job: JobContext) => Promise<unknown>;

export interface JobEvent {
  /** `<epoch>.<n>`, increasing per user. */
  id: string;
  n: number;
  time: number;
  job: JobRecord;
}

export const INTERRUPTED = 'interrupted by a server restart';
const KEEP_FINISHED = 100;
const REPLAY_MAX_EVENTS = 1_000;
const REPLAY_MAX_AGE_MS = 10 * 60_000;
const FINAL: ReadonlySet<JobState> = new Set(['succeeded', 'failed', 'cancelled']);

/** Thrown inside a job function to end it as cancelled. */
export class JobCancelled extends Error {
  constructor() {
    super('cancelled');
  }
}

const publicJob = ({ owner: _owner, ...rest }: StoredJob): JobRecord => structuredClone(rest);

export class JobRunner {
  readonly epoch = randomBytes(6).toString('base64url');
  private readonly jobs = new Map<string, StoredJob>();
  private readonly controllers = new Map<string, AbortController>();
  private readonly fns = new Map<string, JobFn>();
  private readonly queue: string[] = [];
  private running = 0;
  private readonly events = new Map<string, JobEvent[]>();
  private counter = 0;
  private readonly listeners = new Map<string, Set<(e: JobEvent) => void>>();
  private saving: Promise<void> = Promise.resolve();
  private saveTimer: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly done = new Map<string, { promise: Promise<void>; resolve: () => void }>();
  private shuttingDown = false;

  private constructor(
    private readonly file: string | null,
    private readonly concurrency: number,
  ) {}

  /** Loads the jobs file (if any) and marks jobs a previous process left unfinished as failed. */
  static async open(file: string | null, opts: { concurrency?: number } = {}): Promise<JobRunner> {
    const r = new JobRunner(file, opts.concurrency ?? 2);
    if (file) {
      let stored: StoredJob[] = [];
      try {
        stored = (JSON.parse(await fs.promises.readFile(file, 'utf8')) as { jobs: StoredJob[] }).jobs ?? [];
      } catch {
        stored = [];
      }
      let changed = false;
      for (const j of stored) {
        if (!FINAL.has(j.state)) {
          j.state = 'failed';
          j.error = INTERRUPTED;
          j.updated_at = Date.now();
          changed = true;
        }
        r.jobs.set(j.id, j);
      }
      if (changed) await r.save();
    }
    return r;
  }

  /** Queues a job for `owner`; returns its record at once. */
  start(owner: string, kind: string, fn: JobFn, opts: { total?: number; meta?: Record<string, unknown> } = {}): JobRecord {
    if (this.closed) throw new Error('job runner closed');
    const now = Date.now();
    const job: StoredJob = {
      id: newId(),
      owner,
      kind,
      state: 'queued',
      progress: { done: 0, total: opts.total ?? 0 },
      result: null,
      error: null,
      meta: opts.meta ?? {},
      created_at: now,
      updated_at: now,
    };
    this.jobs.set(job.id, job);
    this.fns.set(job.id, fn);
    this.controllers.set(job.id, new AbortController());
    this.queue.push(job.id);
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    this.done.set(job.id, { promise, resolve });
    this.changed(job, true);
    this.pump();
    return publicJob(job);
  }

  private pump(): void {
    while (this.running < this.concurrency && this.queue.length > 0) {
      const id = this.queue.shift()!;
      const job = this.jobs.get(id);
      const fn = this.fns.get(id);
      if (!job || !fn || job.state !== 'queued') continue;
      this.running++;
      void this.run(job, fn).finally(() => {
        this.running--;
        this.fns.delete(id);
        this.controllers.delete(id);
        this.done.get(id)?.resolve();
        this.done.delete(id);
        this.pump();
      });
    }
  }

  private async run(job: StoredJob, fn: JobFn): Promise<void> {
    const ctrl = this.controllers.get(job.id)!;
    job.state = 'running';
    this.changed(job, true);
    let lastEvent = 0;
    const ctx: JobContext = {
      id: job.id,
      signal: ctrl.signal,
      progress: (done, total) => {
        job.progress = { done, total: total ?? job.progress.total };
        const now = Date.now();
        // Progress events at most every 100 ms (and the file at most once a second).
        if (now - lastEvent >= 100 || done === job.progress.total) {
          lastEvent = now;
          this.changed(job, false);
        }
      },
    };
    try {
      const result = await fn(ctx);
      if (this.shuttingDown && ctrl.signal.aborted) {
        job.state = 'failed';
        job.error = INTERRUPTED;
      } else if (ctrl.signal.aborted) {
        job.state = 'cancelled';
        job.result = result ?? null;
      } else {
        job.state = 'succeeded';
        job.result = result ?? null;
      }
    } catch (e) {
      if (this.shuttingDown) {
        job.state = 'failed';
        job.error = INTERRUPTED;
      } else if (ctrl.signal.aborted || e instanceof JobCancelled) {
        job.state = 'cancelled';
      } else {
        job.state = 'failed';
        job.error = e instanceof Error && e.message ? e.message : 'the job failed';
      }
    }
    this.changed(job, true);
    this.prune(job.owner);
  }

  list(owner: string): JobRecord[] {
    return [...this.jobs.values()]
      .filter((j) => j.owner === owner)
      .sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? -1 : 1))
      .map(publicJob);
  }

  get(owner: string, id: string): JobRecord | undefined {
    const j = this.jobs.get(id);
    return j && j.owner === owner ? publicJob(j) : undefined;
  }

  /** Asks a job to stop. A queued job is cancelled at once; a running one when its function notices. */
  cancel(owner: string, id: string): JobRecord | undefined {
    const j = this.jobs.get(id);
    if (!j || j.owner !== owner) return undefined;
    if (j.state === 'queued') {
      j.state = 'cancelled';
      this.changed(j, true);
      this.done.get(id)?.resolve();
      this.done.delete(id);
      this.fns.delete(id);
      this.controllers.delete(id);
    } else if (j.state === 'running') {
      this.controllers.get(id)?.abort();
    }
    return publicJob(j);
  }

  /** Resolves when the job has finished (tests, and callers that run a job synchronously). */
  async wait(id: string): Promise<JobRecord | undefined> {
    await this.done.get(id)?.promise;
    const j = this.jobs.get(id);
    return j ? publicJob(j) : undefined;
  }

  // ---- events -----------------------------------------------------------------

  onEvent(owner: string, cb: (e: JobEvent) => void): () => void {
    let set = this.listeners.get(owner);
    if (!set) this.listeners.set(owner, (set = new Set()));
    set.add(cb);
    return () => set!.delete(cb);
  }

  /** Events after `lastEventId`, or null when they are outside the replay window (the client re-reads). */
  replay(owner: string, lastEventId: string | undefined, now = Date.now()): JobEvent[] | null {
    if (lastEventId === undefined || lastEventId === '') return [];
    const m = /^([A-Za-z0-9_-]+)\.(\d+)$/.exec(lastEventId.trim());
    if (!m || m[1] !== this.epoch) return null;
    const n = Number(m[2]);
    if (n > this.counter) return null;
    // One of this user's events after n was already dropped: an exact replay is impossible.
    if ((this.droppedFor.get(owner) ?? 0) > n) return null;
    const after = (this.events.get(owner) ?? []).filter((e) => e.n > n);
    if (after.length > 0 && now - after[0]!.time > REPLAY_MAX_AGE_MS) return null;
    return after;
  }

  /** Highest event number dropped from each user's window. */
  private readonly droppedFor = new Map<string, number>();

  /** The id of the newest event (for a reset event's id). */
  lastEventId(): string {
    return `${this.epoch}.${this.counter}`;
  }

  private changed(job: StoredJob, persistNow: boolean): void {
    job.updated_at = Date.now();
    const n = ++this.counter;
    const ev: JobEvent = { id: `${this.epoch}.${n}`, n, time: job.updated_at, job: publicJob(job) };
    let list = this.events.get(job.owner);
    if (!list) this.events.set(job.owner, (list = []));
    list.push(ev);
    const cutoff = ev.time - REPLAY_MAX_AGE_MS;
    while (list.length > REPLAY_MAX_EVENTS || (list.length > 0 && list[0]!.time < cutoff)) {
      this.droppedFor.set(job.owner, list.shift()!.n);
    }
    for (const cb of this.listeners.get(job.owner) ?? []) {
      try {
        cb(ev);
      } catch {
        // a stream failing must not stop the job
      }
    }
    if (persistNow) void this.save();
    else this.scheduleSave();
  }

  private prune(owner: string): void {
    const finished = [...this.jobs.values()].filter((j) => j.owner === owner && FINAL.has(j.state)).sort((a, b) => b.updated_at - a.updated_at);
    for (const j of finished.slice(KEEP_FINISHED)) this.jobs.delete(j.id);
  }

  private scheduleSave(): void {
    if (this.saveTimer || !this.file) return;
    this.saveTimer = setTimeout(() => {
      this.saveTimer = null;
      void this.save();
    }, 1_000);
    this.saveTimer.unref();
  }

  private save(): Promise<void> {
    if (!this.file) return Promise.resolve();
    const file = this.file;
    this.saving = this.saving
      .then(() => writeFileAtomic(file, JSON.stringify({ jobs: [...this.jobs.values()] })))
      .catch((e) => console.error('[quire jobs] cannot save jobs:', e));
    return this.saving;
  }

  /**
   * Stops the runner on shutdown: queued jobs and running jobs are asked to
   * stop and end as failed ("interrupted by a server restart"); a job that
   * does not stop within `waitMs` stays `running` in the file, and the next
   * start marks it failed the same way.
   */
  async close(waitMs = 2_000): Promise<void> {
    this.closed = true;
    this.shuttingDown = true;
    for (const id of this.queue.splice(0)) {
      const j = this.jobs.get(id);
      if (j && j.state === 'queued') {
        j.state = 'failed';
        j.error = INTERRUPTED;
        this.changed(j, false);
      }
      this.done.get(id)?.resolve();
    }
    for (const c of this.controllers.values()) c.abort();
    const pending = [...this.done.values()].map((d) => d.promise);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(pending), new Promise((r) => (timer = setTimeout(r, waitMs)))]);
    clearTimeout(timer);
    if (this.saveTimer) clearTimeout(this.saveTimer);
    this.saveTimer = null;
    await this.save();
  }
}
