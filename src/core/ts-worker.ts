/**
 * Worker threads running our TypeScript sources (no build step).
 *
 * A worker does not inherit the tsx loader the main thread runs under, and
 * registering it in the worker makes every module load a round trip to
 * tsx's hooks thread: about 350 ms before a scan worker could start work,
 * longer while the cores are busy. So a worker's entry is bundled once per
 * process with esbuild (the compiler tsx itself uses; about 0.15 s) into one
 * plain ES module in a private folder under the temporary folder, named by
 * its content hash, which starts in under 0.1 s. Later processes reuse it
 * while none of the files it was built from changed. Should esbuild be
 * missing or fail, the worker starts from ts-worker-boot.mjs, which
 * registers tsx and imports the entry.
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

type BuildSync = (options: Record<string, unknown>) => {
  outputFiles?: Array<{ contents: Uint8Array }>;
  metafile?: { inputs: Record<string, unknown> };
};

function loadEsbuild(): BuildSync | null {
  try {
    return (createRequire(import.meta.url)('esbuild') as { buildSync: BuildSync }).buildSync;
  } catch {
    return null;
  }
}

/** The bundle of an entry and the files it was built from, with their size and mtime. */
interface Manifest {
  bundle: string;
  inputs: Array<[file: string, size: number, mtimeMs: number]>;
}

/** This user's bundle folder, made private; null if it exists but is not this user's own. */
function bundleDir(): string | null {
  const uid = process.getuid?.();
  const dir = path.join(os.tmpdir(), `quire-workers-${uid ?? 'user'}`);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = fs.statSync(dir);
  if (uid !== undefined && (st.uid !== uid || (st.mode & 0o022) !== 0)) return null;
  return dir;
}

/** The manifest's bundle, when it and every file it was built from are as they were. */
function reusable(manifestFile: string): string | null {
  try {
    const m = JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as Manifest;
    for (const [file, size, mtimeMs] of m.inputs) {
      const st = fs.statSync(file);
      if (st.size !== size || st.mtimeMs !== mtimeMs) return null;
    }
    return fs.existsSync(m.bundle) ? m.bundle : null;
  } catch {
    return null;
  }
}

function writeAtomic(file: string, data: string | Uint8Array): void {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, data, { mode: 0o600 });
  fs.renameSync(tmp, file);
}

/**
 * The bundle of `entry`: the one built by an earlier process while none of
 * its source files changed (a manifest lists them with size and mtime;
 * checking takes a few ms, building ~0.15 s of this thread), else a new one.
 */
function bundleOf(entry: URL): string | null {
  const cached = bundles.get(entry.href);
  if (cached !== undefined) return cached;
  let out: string | null = null;
  if (process.env['QUIRE_WORKER_BUNDLE'] !== '0' && entry.protocol === 'file:') {
    try {
      out = bundleNow(fileURLToPath(entry));
    } catch {
      out = null;
    }
  }
  bundles.set(entry.href, out);
  return out;
}

function bundleNow(entryFile: string): string | null {
  const dir = bundleDir();
  if (dir === null) return null;
  const name = path.basename(entryFile, '.ts');
  const manifestFile = path.join(dir, `${name}-${createHash('sha256').update(entryFile).digest('hex').slice(0, 16)}.json`);
  const reused = reusable(manifestFile);
  if (reused !== null) return reused;
  const buildSync = loadEsbuild();
  if (buildSync === null) return null;
  const started = Date.now();
  const result = buildSync({
    entryPoints: [entryFile],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: `node${process.versions.node.split('.')[0]}`,
    banner: { js: REQUIRE_SHIM },
    write: false,
    metafile: true,
    absWorkingDir: process.cwd(),
    logLevel: 'silent',
  });
  const code = result.outputFiles?.[0]?.contents;
  if (code === undefined || result.metafile === undefined) return null;
  const file = path.join(dir, `${name}-${createHash('sha256').update(code).digest('hex').slice(0, 16)}.mjs`);
  if (!fs.existsSync(file)) writeAtomic(file, code);
  const inputs: Manifest['inputs'] = [];
  for (const input of Object.keys(result.metafile.inputs)) {
    const abs = path.resolve(input);
    const st = fs.statSync(abs, { throwIfNoEntry: false });
    // An input that is not a file, or changed while being bundled, cannot vouch for this bundle next time.
    if (st === undefined || st.mtimeMs > started) return file;
    inputs.push([abs, st.size, st.mtimeMs]);
  }
  writeAtomic(manifestFile, JSON.stringify({ bundle: file, inputs } satisfies Manifest));
  return file;
}

/** Start a worker thread running the TypeScript module at `entry` (a file URL); `data` reaches it as `workerData.data`. */
export function startTsWorker(entry: URL, data: unknown = null, name = 'quire-worker'): Worker {
  const workerData = { entry: entry.href, data };
  const bundle = bundleOf(entry);
  return new Worker(bundle ?? BOOT, { workerData, name });
}
