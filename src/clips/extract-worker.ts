/**
 * Worker thread of `extractOffThread` (clips.ts): extracts one page and
 * answers `{ article }` or `{ error }`. A worker, so a slow page never holds
 * the server's main thread; the caller ends it at its time limit.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { extractArticle } from './extract.js';

const { html, url } = (workerData as { data: { html: string; url: string } }).data;
try {
  parentPort!.postMessage({ article: extractArticle(html, new URL(url)) });
} catch (e) {
  // Turndown recurses once per nesting level: a page nested deeply enough overflows the stack.
  parentPort!.postMessage({ error: e instanceof Error ? e.message : String(e) });
}
