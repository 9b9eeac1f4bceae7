// Bundles of our TypeScript sources, made with esbuild (the compiler tsx
// itself uses) and kept between runs.
//
// Running the sources through tsx's loader costs every process a loader
// thread (an isolate of its own: about 35 MB of RSS) and a compile of each
// module at every start (about a second for the `quire` command). A bundle
// is one plain ES module built once and reused by later processes while
// none of the files it was built from changed: a manifest beside it lists
// them with size and mtime, and checking it takes a few milliseconds.
//
// Plain JavaScript (with bundle.d.mts for TypeScript) because bin/quire.js
// uses it before anything can run TypeScript.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** Bundled CommonJS packages call `require`; an ES module has none of its own. */
const REQUIRE_SHIM = "import { createRequire as __quireCreateRequire } from 'node:module'; const require = __quireCreateRequire(import.meta.url);";

function loadEsbuild() {
  try {
    return createRequire(import.meta.url)('esbuild');
  } catch {
    return null;
  }
}

/**
 * In a bundle, `import.meta.url` would be the bundle's own URL, and files
 * found relative to it (a worker's entry, the demo vault, a script) would
 * be looked for next to the bundle: each of our TypeScript modules gets its
 * own URL written in instead. (A plain text replacement: no TypeScript
 * source may have the words in a string.)
 */
const sourceUrls = {
  name: 'quire-source-urls',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, (args) => {
      if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      const text = fs.readFileSync(args.path, 'utf8');
      if (!text.includes('import.meta.url')) return undefined;
      return { contents: text.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)), loader: 'ts' };
    });
  },
};

/** The manifest's bundle, when it and every file it was built from are as they were. */
function reusable(manifestFile) {
  try {
    const m = JSON.parse(fs.readFileSync(manifestFile, 'utf8'));
    for (const [file, size, mtimeMs] of m.inputs) {
      const st = fs.statSync(file);
      if (st.size !== size || st.mtimeMs !== mtimeMs) return null;
    }
    return fs.existsSync(m.bundle) ? m.bundle : null;
  } catch {
    return null;
  }
}

function writeAtomic(file, data) {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, data, { mode: 0o600 });
  fs.renameSync(tmp, file);
}

/**
 * The bundle of `entryFile` in `dir`: the one an earlier process built while
 * none of its source files changed, else a new one; null when esbuild is
 * missing or fails (the caller then runs the sources through tsx).
 * `packagesExternal`: packages stay imports (then `dir` must be inside the
 * project, so that Node finds them from there); otherwise they are bundled
 * too.
 */
export function bundleEntry(entryFile, { dir, packagesExternal = false }) {
  const job = prepare(entryFile, dir, packagesExternal, false);
  if (job === null || typeof job === 'string') return job;
  try {
    return job.keep(job.esbuild.buildSync(job.options));
  } catch {
    return null;
  }
}

/** `bundleEntry` with each module's own `import.meta.url` (esbuild runs plugins only in its asynchronous API). */
export async function bundleEntryWithSourceUrls(entryFile, { dir, packagesExternal = false }) {
  const job = prepare(entryFile, dir, packagesExternal, true);
  if (job === null || typeof job === 'string') return job;
  try {
    return job.keep(await job.esbuild.build({ ...job.options, plugins: [sourceUrls] }));
  } catch {
    return null;
  }
}

/** The reusable bundle's path; else what building one takes (null without esbuild). */
function prepare(entryFile, dir, packagesExternal, rewriteUrls) {
  const manifestFile = manifestOf(entryFile, dir, packagesExternal, rewriteUrls);
  const reused = reusable(manifestFile);
  if (reused !== null) return reused;
  const esbuild = loadEsbuild();
  if (esbuild === null) return null;
  const started = Date.now();
  return { esbuild, options: buildOptions(entryFile, packagesExternal), keep: (result) => keep(result, entryFile, dir, manifestFile, started) };
}

/** The entry's file name without its extension, which names its bundle and manifest. */
function baseName(entryFile) {
  return path.basename(entryFile).replace(/\.[cm]?[jt]s$/, '');
}

function manifestOf(entryFile, dir, packagesExternal, rewriteUrls) {
  const name = baseName(entryFile);
  const key = createHash('sha256').update(`${entryFile}\0${packagesExternal}\0${rewriteUrls}`).digest('hex').slice(0, 16);
  return path.join(dir, `${name}-${key}.json`);
}

function buildOptions(entryFile, packagesExternal) {
  return {
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
    ...(packagesExternal ? { packages: 'external' } : {}),
  };
}

/** Write the built bundle (named by its content hash) and its manifest; the bundle's path. */
function keep(result, entryFile, dir, manifestFile, started) {
  const code = result.outputFiles?.[0]?.contents;
  if (code === undefined || result.metafile === undefined) return null;
  const file = path.join(dir, `${baseName(entryFile)}-${createHash('sha256').update(code).digest('hex').slice(0, 16)}.mjs`);
  if (!fs.existsSync(file)) writeAtomic(file, code);
  const inputs = [];
  for (const input of Object.keys(result.metafile.inputs)) {
    const abs = path.resolve(input);
    const st = fs.statSync(abs, { throwIfNoEntry: false });
    // An input that is not a file, or changed while being bundled, cannot vouch for this bundle next time.
    if (st === undefined || st.mtimeMs > started) return file;
    inputs.push([abs, st.size, st.mtimeMs]);
  }
  writeAtomic(manifestFile, JSON.stringify({ bundle: file, inputs }));
  return file;
}

/**
 * Run a TypeScript file of this project as the program: from its bundle
 * (packages left external, kept in node_modules/.cache/quire), or through
 * tsx when that cannot be made or `QUIRE_BUNDLE=0`.
 */
export async function runTypeScript(entryFile) {
  let bundle = null;
  if (process.env.QUIRE_BUNDLE !== '0') {
    try {
      const dir = path.join(projectRoot(entryFile), 'node_modules', '.cache', 'quire');
      fs.mkdirSync(dir, { recursive: true });
      bundle = await bundleEntryWithSourceUrls(entryFile, { dir, packagesExternal: true });
    } catch {
      bundle = null;
    }
  }
  if (bundle !== null) return import(pathToFileURL(bundle).href);
  const { register } = await import('tsx/esm/api');
  register();
  return import(pathToFileURL(entryFile).href);
}

/** The folder of the package.json above `file` (where node_modules is). */
function projectRoot(file) {
  for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, 'node_modules'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no node_modules above ${file}`);
  }
}
