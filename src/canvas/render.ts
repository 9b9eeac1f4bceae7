/**
 * Exports read and rendered on a worker thread (export-worker.ts), ended after
 * EXPORT_TIMEOUT_MS. Rendering is synchronous and grows with the drawing:
 * about 0.2 ms per plain shape and up to 0.4 s for a rounded line of
 * POINTS_MAX points, so a scene at ELEMENTS_MAX could hold the main thread
 * for minutes. See docs/canvas.md, "Limits".
 */
import { startWorker } from '../core/worker.js';
import { Turns } from '../core/turns.js';
import { AppError, type ErrorDetails } from '../core/errors.js';

/** Longest one export may render before it is refused. */
export const EXPORT_TIMEOUT_MS = 20_000;
/** Renders running at once; more wait their turn (each takes a core while it runs). */
export const EXPORT_CONCURRENCY = 2;
/** Most requests waiting for their turn; more are answered 503 with Retry-After. */
export const EXPORT_QUEUE_MAX = 8;

const turns = new Turns(EXPORT_CONCURRENCY, EXPORT_QUEUE_MAX, (running, waiting) => `${running} drawings are being rendered and ${waiting} more wait; try again shortly`);

/**
 * The drawing of a canvas Note's text as SVG or PNG bytes, read and rendered
 * off the main thread; 400 `too_complex` after `timeoutMs`, the note's own
 * 400 when it is not a readable canvas. The text crosses to the worker, not
 * the scene: copying a string is a memcpy, while cloning a parsed scene of
 * 32 MiB took 2 s and parsing it 0.9 s on this thread.
 */
export async function renderNoteOffThread(noteText: string, format: 'png' | 'svg', timeoutMs = EXPORT_TIMEOUT_MS): Promise<Buffer> {
  const done = await turns.take();
  try {
    const worker = startWorker('canvas/export-worker.js', { text: noteText, format }, 'quire-canvas-export');
    return await new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(() => {
        void worker.terminate();
        reject(
          new AppError('bad_request', `The drawing could not be rendered within ${timeoutMs} ms`, {
            details: { reason: 'too_complex', limit: String(timeoutMs) },
          }),
        );
      }, timeoutMs);
      const fail = (message: string, details?: ErrorDetails | null) =>
        reject(new AppError('bad_request', message, { details: details ?? { reason: 'render_failed' } }));
      worker.once('message', (m: { bytes?: Uint8Array; error?: { message: string; details: ErrorDetails | null } }) =>
        m.bytes ? resolve(Buffer.from(m.bytes.buffer, m.bytes.byteOffset, m.bytes.length)) : fail(m.error!.message, m.error!.details),
      );
      worker.once('error', (e) => fail(`The drawing could not be rendered: ${e.message}`));
      worker.once('exit', () => {
        clearTimeout(timer);
        fail('The drawing could not be rendered: the renderer stopped');
      });
    });
  } finally {
    done();
  }
}
