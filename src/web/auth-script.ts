/** The pages' script, read once from auth.browser.js (plain browser JavaScript, served as is). */
import fs from 'node:fs';

export const AUTH_SCRIPT: string = fs.readFileSync(new URL('./auth.browser.js', import.meta.url), 'utf8');
