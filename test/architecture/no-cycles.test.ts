/**
 * No import cycles under src/ (issue 20): areas depend downwards only, and a
 * type shared by several areas lives below them. Runs the same rule as
 * `npx depcruise src` (.dependency-cruiser.cjs); type-only imports count.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { cruise, type ICruiseResult } from 'dependency-cruiser';
import { afterAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const config = createRequire(import.meta.url)(path.join(root, '.dependency-cruiser.cjs'));

/** Every cycle dependency-cruiser finds from `dir`, each as `a.ts → b.ts → a.ts`. */
async function cyclesIn(dir: string): Promise<string[]> {
  const { output } = await cruise([dir], { ...config.options, ruleSet: { forbidden: config.forbidden }, validate: true, baseDir: root });
  const out = new Set<string>();
  for (const v of (output as ICruiseResult).summary.violations) {
    if (v.rule.name !== 'no-circular') continue;
    out.add([v.from, ...(v.cycle ?? []).map((c) => c.name)].join(' → '));
  }
  return [...out].sort();
}

describe('import cycles', () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'quire-cycles-'));
  afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

  it('src/ has none', async () => {
    expect(await cyclesIn('src')).toEqual([]);
  });

  it('the check names a cycle made only of type imports', async () => {
    fs.writeFileSync(path.join(scratch, 'a.ts'), "import type { B } from './b.js';\nexport interface A { b: B }\n");
    fs.writeFileSync(path.join(scratch, 'b.ts'), "import type { A } from './a.js';\nexport interface B { a?: A }\n");
    const cycles = await cyclesIn(path.relative(root, scratch));
    expect(cycles).toHaveLength(1);
    expect(cycles[0]).toMatch(/a\.ts → .*b\.ts → .*a\.ts$/);
  });
});
