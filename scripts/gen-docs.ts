/** Regenerates docs/actions.md from the registry: `npm run docs`. */
import fs from 'node:fs';
import { registry } from '../src/actions/registry.js';
import { renderActionsDoc } from '../src/surfaces/docs/actions-doc.js';

fs.writeFileSync(new URL('../docs/actions.md', import.meta.url), renderActionsDoc(registry));
console.log('docs/actions.md written');
