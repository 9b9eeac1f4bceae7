/** Run by ts-worker.test.ts in a process of its own: prints the URL the echo worker runs from. */
import { startTsWorker } from '../../src/core/ts-worker.js';

const w = startTsWorker(new URL('./echo-worker.ts', import.meta.url), null, 'echo');
w.postMessage('x');
const reply = await new Promise<{ url: string }>((resolve) => w.once('message', resolve));
await w.terminate();
console.log(reply.url);
