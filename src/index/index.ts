/** The per-Home in-memory index; see docs/index.md. */
export { HomeIndex, derivedId } from './home-index.js';
export { resolveTarget, nameKeyOfPath, normalizePath, type PathLookup } from './links.js';
export { TagIndex, tagKey } from './tags.js';
export { FullTextIndex } from './fulltext/full-text.js';
export { INDEX_SNAPSHOT_VERSION, INDEX_SNAPSHOT_FORMAT, IndexSnapshotError } from './snapshot.js';
export type {
  Backlink,
  BacklinkOccurrence,
  FileEntry,
  FileStat,
  HomeIndexOptions,
  NoteEntry,
  ResolvedLink,
  SearchHit,
  IndexingMode,
  SearchOptions,
  TagCount,
  TaskEntry,
  UnresolvedLink,
} from './types.js';
