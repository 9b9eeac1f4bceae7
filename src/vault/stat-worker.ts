/**
 * The stat thread of a large walk (src/vault/walk.ts, `StatThread`): each
 * message is a batch of absolute paths, answered in order by their lstat
 * columns (`lstatColumns`), so the walk's system calls run beside the main
 * thread's work instead of on it.
 */
import { parentPort } from 'node:worker_threads';
import { lstatColumns } from './walk.js';

parentPort!.on('message', (paths: string[]) => {
  const out = lstatColumns(paths);
  parentPort!.postMessage(out, [out.buffer as ArrayBuffer]);
});
