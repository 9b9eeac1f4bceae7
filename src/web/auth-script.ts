/** The pages' script, read once from auth.browser.js (plain browser JavaScript, served as is). */
import fs from 'node:fs';
import { codeFile } from '../core/install.js';

export const AUTH_SCRIPT: string = fs.readFileSync(codeFile('web/auth.browser.js'), 'utf8');
