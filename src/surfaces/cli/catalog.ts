/**
 * The action catalog as data: each action the registry declares, with its
 * facts and input schema but no handler. The build writes it to
 * dist/surfaces/cli/catalog.json (scripts/build.mjs), so the commands that
 * need only the facts (`quire actions list`, `quire action run --server`,
 * `quire login`) load no area's code, index or vault. Run from the sources
 * (tests), there is no catalog.json and it comes from the registry itself.
 */
import fs from 'node:fs';
import { codeFile } from '../../core/install.js';
import type { ActionDef } from '../../actions/types.js';

export type CatalogEntry = Omit<ActionDef<any>, 'handler'> & { implemented: boolean };

export function catalogEntries(actions: ReadonlyArray<ActionDef<any>>): CatalogEntry[] {
  return actions.map(({ handler, ...facts }) => ({ ...facts, implemented: handler !== undefined }));
}

const BUILT = codeFile('surfaces/cli/catalog.json');
let loaded: Promise<CatalogEntry[]> | undefined;

export function loadCatalog(): Promise<CatalogEntry[]> {
  loaded ??= fs.existsSync(BUILT)
    ? Promise.resolve(JSON.parse(fs.readFileSync(BUILT, 'utf8')) as CatalogEntry[])
    : import('../../actions/registry.js').then((m) => catalogEntries(m.registry));
  return loaded;
}

export async function findCatalogEntry(name: string): Promise<CatalogEntry | undefined> {
  return (await loadCatalog()).find((a) => a.name === name);
}
