/**
 * The journal's domain code, which only its handlers call: loaded by the first such call, so
 * that a server start does not compile it (nor the composer and templates it stands on) before
 * it listens (docs/performance.md, "The server's own start").
 */
export * as journal from './journal.js';
