/**
 * The snapshot format: everything needed to rebuild a HomeIndex without
 * re-reading files. A plain JSON-able object (as long as the frontmatter in
 * the facts is); see docs/index.md "Snapshot".
 */
import type { AsPlainObject } from 'minisearch';
import { AppError } from '../core/errors.js';
import type { NoteFacts } from '../markdown/facts.js';
import { isLoadableSearchJson } from './search.js';
import type { FileStat } from './types.js';

/**
 * Bump whenever the meaning of a snapshot changes: its shape, NoteFacts, the
 * MiniSearch fields/options or what goes into a search document.
 */
export const INDEX_SNAPSHOT_VERSION = 1;
export const INDEX_SNAPSHOT_FORMAT = 'quire-home-index';

export interface IndexSnapshot {
  format: typeof INDEX_SNAPSHOT_FORMAT;
  version: number;
  /** Notes in path order (code units), with the stat recorded at upsert and their facts. */
  notes: Array<{ path: string; stat: FileStat; facts: NoteFacts }>;
  /** Other files in path order. */
  files: Array<{ path: string; stat: FileStat }>;
  /** `MiniSearch#toJSON()` of the full-text index. */
  search: AsPlainObject;
}

/** A snapshot this build cannot use; the caller should rebuild from the files. */
export class IndexSnapshotError extends AppError {
  constructor(reason: string, message: string) {
    super('internal', message, { details: { reason } });
    this.name = 'IndexSnapshotError';
  }
}

function isStat(x: unknown): x is FileStat {
  if (typeof x !== 'object' || x === null) return false;
  const s = x as Record<string, unknown>;
  return typeof s['size'] === 'number' && typeof s['mtimeMs'] === 'number' && typeof s['etag'] === 'string';
}

/** Throws IndexSnapshotError unless `s` looks like a snapshot this build wrote. */
export function checkSnapshot(s: unknown): asserts s is IndexSnapshot {
  if (typeof s !== 'object' || s === null) throw new IndexSnapshotError('index_snapshot_invalid', 'Index snapshot is not an object');
  const o = s as Record<string, unknown>;
  if (o['format'] !== INDEX_SNAPSHOT_FORMAT) {
    throw new IndexSnapshotError('index_snapshot_invalid', 'Not a Quire index snapshot');
  }
  if (o['version'] !== INDEX_SNAPSHOT_VERSION) {
    throw new IndexSnapshotError(
      'index_snapshot_version',
      `Index snapshot version ${String(o['version'])} is not ${INDEX_SNAPSHOT_VERSION}; rebuild the index`,
    );
  }
  const notes = o['notes'];
  const files = o['files'];
  if (!Array.isArray(notes) || !Array.isArray(files)) {
    throw new IndexSnapshotError('index_snapshot_invalid', 'Index snapshot lacks notes or files');
  }
  for (const n of notes as unknown[]) {
    const e = n as Record<string, unknown> | null;
    if (
      typeof e !== 'object' ||
      e === null ||
      typeof e['path'] !== 'string' ||
      !isStat(e['stat']) ||
      typeof e['facts'] !== 'object' ||
      e['facts'] === null ||
      !Array.isArray((e['facts'] as Record<string, unknown>)['links'])
    ) {
      throw new IndexSnapshotError('index_snapshot_invalid', 'Index snapshot has a malformed note');
    }
  }
  for (const f of files as unknown[]) {
    const e = f as Record<string, unknown> | null;
    if (typeof e !== 'object' || e === null || typeof e['path'] !== 'string' || !isStat(e['stat'])) {
      throw new IndexSnapshotError('index_snapshot_invalid', 'Index snapshot has a malformed file');
    }
  }
  if (!isLoadableSearchJson(o['search'])) {
    throw new IndexSnapshotError('index_snapshot_version', 'Index snapshot search index is not loadable by this MiniSearch');
  }
}
