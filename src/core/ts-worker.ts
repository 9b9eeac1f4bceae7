/**
 * Worker threads running our TypeScript sources (no build step).
 *
 * A worker does not inherit the tsx loader the main thread runs under, and
 * registering it in the worker makes every module load a round trip to
 * tsx's hooks thread: about 350 ms before a scan worker could start work,
 * longer while the cores are busy. So a worker's entry is bundled once per
 * process with esbuild (the compiler tsx itself uses; about 0.1 s) into one
 * plain ES module under the temporary folder, named by its content hash,
 * which starts in under 0.1 s. Should esbuild be missing or fail, the worker
 * starts from ts-worker-boot.mjs, which registers tsx and imports the entry.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

const BOOT = new URL('./ts-worker-boot.mjs', import.meta.url);

/** Bundled CommonJS packages call `require`; an ES module has none of its own. */
const REQUIRE_SHIM = "import { createRequire as __quireCreateRequire } from 'node:module'; const require = __quireCreateRequire(import.meta.url);";

/** Entry URL → the bundle's path, or null when bundling failed (then tsx boots it). */
const bundles = new Map<string, string | null>();

type BuildSync = (options: Record<string, unknown>) => { outputFiles?: Array<{ contents: Uint8Array }> };

function loadEsbuild(): BuildSync | null {
  try {
    return (createRequire(import.meta.url)('esbuild') as { buildSync: BuildSync }).buildSync;
  } catch {
    return null;
  }
}

function bundleOf(entry: URL): string | null {
  const cached = bundles.get(entry.href);
  if (cached !== undefined) return cached;
  let out: string | null = null;
  const buildSync = process.env['QUIRE_WORKER_BUNDLE'] === '0' || entry.protocol !== 'file:' ? null : loadEsbuild();
  if (buildSync !== null) {
    try {
      const result = buildSync({
        entryPoints: [fileURLToPath(entry)],
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: `node${process.versions.node.split('.')[0]}`,
        banner: { js: REQUIRE_SHIM },
        write: false,
        logLevel: 'silent',
      });
      const code = result.outputFiles?.[0]?.contents;
      if (code !== undefined) {
        const hash = createHash('sha256').update(code).digest('hex').slice(0, 16);
        const dir = path.join(os.tmpdir(), `quire-workers-${process.getuid?.() ?? 'user'}`);
        const file = path.join(dir, `${path.basename(entry.pathname, '.ts')}-${hash}.mjs`);
        if (!fs.existsSync(file)) {
          fs.mkdirSync(dir, { recursive: true });
          const tmp = `${file}.${process.pid}.tmp`;
          fs.writeFileSync(tmp, code);
          fs.renameSync(tmp, file);
        }
        out = file;
      }
    } catch {
      out = null;
    }
  }
  bundles.set(entry.href, out);
  return out;
}

/** Start a worker thread running the TypeScript module at `entry` (a file URL); `data` reaches it as `workerData.data`. */
export function startTsWorker(entry: URL, data: unknown = null, name = 'quire-worker'): Worker {
  const workerData = { entry: entry.href, data };
  const bundle = bundleOf(entry);
  return new Worker(bundle ?? BOOT, { workerData, name });
}
