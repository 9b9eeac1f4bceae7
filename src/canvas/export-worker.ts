/**
 * Worker thread of `renderNoteOffThread` (render.ts): reads one canvas Note and
 * answers its drawing's `{ bytes }` or `{ error }`. A worker, so a large drawing never holds
 * the server's main thread; the caller ends it at its time limit.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { AppError } from '../core/errors.js';
import { parseCanvasNote } from './excalidraw-file.js';
import { renderPng, renderSvg } from './export.js';

const { text, format } = (workerData as { data: { text: string; format: 'png' | 'svg' } }).data;
try {
  const { scene } = parseCanvasNote(text);
  const bytes = format === 'svg' ? Buffer.from(renderSvg(scene), 'utf8') : renderPng(scene);
  parentPort!.postMessage({ bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length) });
} catch (e) {
  parentPort!.postMessage({
    error: { message: e instanceof Error ? e.message : String(e), details: e instanceof AppError ? e.details : null },
  });
}
