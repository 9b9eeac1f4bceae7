// Entry of every worker thread: workers do not inherit the tsx loader the
// main thread was started with, so register it here, then run the worker's
// TypeScript module named in workerData.
import { register } from 'tsx/esm/api';
import { workerData } from 'node:worker_threads';

register();
await import(workerData.entry);
