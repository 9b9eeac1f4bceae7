/**
 * The tasks area's domain code, which only its handlers call: one module loaded by the first
 * such call, so that a server start does not compile the task views' expression language and
 * row engine (about 80 KB of the bundle) before it listens, and the bundle gets one lazy entry
 * for them (docs/performance.md, "The server's own start").
 */
export * as attach from './attach.js';
export * as tasks from './tasks.js';
export * as views from './views.js';
