/**
 * One turn of the event loop after every test.
 *
 * A vitest worker reports to its runner over IPC and gives each call 60 s
 * for its answer. A file whose tests never leave the microtask queue (the
 * long synchronous comparisons and property tests) leaves that answer
 * unread, and on a loaded machine such a file runs past 60 s: the run then
 * fails with "Timeout calling onTaskUpdate" although every test passed.
 * The timer is `node:timers`' own, which fake timers do not replace.
 */
import { setImmediate } from 'node:timers';
import { afterEach } from 'vitest';

afterEach(() => new Promise<void>((resolve) => setImmediate(resolve)));
