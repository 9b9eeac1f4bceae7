/**
 * Document history: every change to a collaborative document is a point (number, time, author,
 * and the Yjs update it made), appended as one JSON line to
 * `<data>/state/history/<owner id>/<note>.ndjson` — never in the Home. The points in order are
 * the document: replaying the first n of them gives its state after point n, which is how a
 * preview is made and how a restarted server picks an open document up again.
 *
 * Compaction keeps every point of the last day; older points are merged per hour and author
 * (one point each, numbered as the last it replaces). Yjs updates commute, so the document
 * replayed from compacted points is the same; only the steps inside an old hour are gone.
 */
import fs from 'node:fs';
import path from 'node:path';
import * as Y from 'yjs';

export interface Point {
  /** Point number, increasing from 1. */
  n: number;
  /** Unix ms. */
  t: number;
  /** Author key (authors.ts). */
  a: string;
  /** The Yjs update, base64. */
  u: string;
}

export const DAY_MS = 24 * 60 * 60 * 1000;
const HOUR_MS = 60 * 60 * 1000;

/** Points older than a day merged per (hour, author); newer ones kept as they are. Pure. */
export function compactPoints(points: readonly Point[], now: number): Point[] {
  const cutoff = now - DAY_MS;
  const groups = new Map<string, Point[]>();
  const out: Point[] = [];
  for (const p of points) {
    if (p.t >= cutoff) {
      out.push(p);
      continue;
    }
    const key = `${Math.floor(p.t / HOUR_MS)}|${p.a}`;
    const g = groups.get(key);
    if (g) g.push(p);
    else groups.set(key, [p]);
  }
  for (const g of groups.values()) {
    if (g.length === 1) {
      out.push(g[0]!);
      continue;
    }
    const last = g[g.length - 1]!;
    const merged = Y.mergeUpdates(g.map((p) => Buffer.from(p.u, 'base64')));
    out.push({ n: last.n, t: last.t, a: last.a, u: Buffer.from(merged).toString('base64') });
  }
  return out.sort((x, y) => x.n - y.n);
}

function needsCompaction(points: readonly Point[], now: number): boolean {
  const cutoff = now - DAY_MS;
  const seen = new Set<string>();
  for (const p of points) {
    if (p.t >= cutoff) break;
    const key = `${Math.floor(p.t / HOUR_MS)}|${p.a}`;
    if (seen.has(key)) return true;
    seen.add(key);
  }
  return false;
}

function parseLines(text: string): Point[] {
  const out: Point[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    try {
      const p = JSON.parse(line) as Point;
      if (typeof p.n === 'number' && typeof p.u === 'string') out.push(p);
    } catch {
      // A line cut short by a crash: the points before it stand.
    }
  }
  return out;
}

/** The history of one document; appends are buffered and written in order by `flush`. */
export class HistoryLog {
  private pending: string[] = [];
  private writing: Promise<void> = Promise.resolve();

  private constructor(
    readonly file: string,
    readonly points: Point[],
  ) {}

  static async open(file: string, now: number): Promise<HistoryLog> {
    let text = '';
    try {
      text = await fs.promises.readFile(file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    let points = parseLines(text);
    if (needsCompaction(points, now)) {
      points = compactPoints(points, now);
      const tmp = `${file}.${process.pid}.tmp`;
      await fs.promises.writeFile(tmp, points.map((p) => JSON.stringify(p) + '\n').join(''));
      await fs.promises.rename(tmp, file);
    }
    return new HistoryLog(file, points);
  }

  get last(): number {
    return this.points.length ? this.points[this.points.length - 1]!.n : 0;
  }

  append(author: string, update: Uint8Array, t: number): Point {
    const p: Point = { n: this.last + 1, t, a: author, u: Buffer.from(update).toString('base64') };
    this.points.push(p);
    this.pending.push(JSON.stringify(p) + '\n');
    return p;
  }

  /** Resolves once every point appended so far is in the file. */
  flush(): Promise<void> {
    if (this.pending.length === 0) return this.writing;
    const lines = this.pending.join('');
    this.pending = [];
    this.writing = this.writing.then(async () => {
      await fs.promises.mkdir(path.dirname(this.file), { recursive: true });
      await fs.promises.appendFile(this.file, lines);
    });
    return this.writing;
  }

  /** The document's text after point `n` (every point up to it replayed). */
  textAt(n: number): string {
    return replay(this.points.filter((p) => p.n <= n)).getText('content').toString();
  }
}

/** A fresh document with the given points applied in order. */
export function replay(points: readonly Point[], onPoint?: (doc: Y.Doc, p: Point) => void): Y.Doc {
  const doc = new Y.Doc({ gc: false });
  for (const p of points) {
    if (onPoint) onPoint(doc, p);
    else Y.applyUpdate(doc, Buffer.from(p.u, 'base64'));
  }
  return doc;
}
