/**
 * Domain code that only the notes area's handlers call (the composer, templates, web clips):
 * loaded by the first such call instead of at every server start, one lazy entry of the bundle
 * for all three (docs/performance.md, "The server's own start").
 */
export * as clips from '../clips/clips.js';
export * as composer from '../composer/composer.js';
export * as templates from '../templates/templates.js';
