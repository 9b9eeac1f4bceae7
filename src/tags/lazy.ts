/**
 * The tag rewrites (rename, reconcile, undo), which only their handlers run: loaded by the
 * first such call instead of at every server start (docs/performance.md, "The server's own start").
 */
export * as rewrite from './rewrite.js';
