/** The vault layer: a Home on disk. See docs/vault-disk.md. */
export { Home, type HomeEvent, type HomeListener, type HomeOptions, type ListEntry, type ListOptions, type ReadResult, type WriteOptions, type WriteResult } from './home.js';
export { checkNewName, nameKey, resolveHomePath, toHomeRel, validateRelPath, MAX_PATH_BYTES, MAX_SEGMENT_BYTES } from './paths.js';
export { fsyncDir, removeFile, renameAtomic, tempPathFor, writeFileAtomic, type AtomicIo } from './atomic.js';
export { etagOf, formatEtag, ifMatchAccepts, normalizeEtag, parseEtagList, readWithEtag } from './etag.js';
export { WriterLock } from './lock.js';
export { RecentWrites, type FileSig, type ObservedState, type OwnWriteCheck } from './recent.js';
export { watchHome, type HomeWatcher, type WatchChange, type WatchOptions, type WatcherStats } from './watcher.js';
export { INTERNAL_DIRS, TEMP_MARKER, isIgnoredPath, isTempName } from './ignore.js';
