#!/usr/bin/env node
// `npm run build`: src/**/*.ts → dist/**/*.js, one file for one file.
//
// esbuild transpiles each file on its own (no bundling, no type checking:
// `tsc --noEmit` checks types); a build takes about a second where tsc's
// emit takes ten. dist/ keeps src/'s layout, so a worker thread runs its
// file there by the same path as in src/ (src/core/worker.ts).
// Other files in src/ (auth.browser.js) are copied as they are, and the
// action catalog is written as data for the command line (writeCatalog).
// Two exceptions to one file for one file: a package made of hundreds of
// small ES modules is bundled into one file of dist/vendor/ (VENDORED), and
// the thin client is also bundled into one CommonJS file (writeThinClient),
// and with a C compiler its native twin is compiled (writeNativeClient).
// Beside the tree, the full command line and the vault daemon are bundled
// into dist/bundle/ (writeCliBundle): what bin/quire.js runs. So a file of the install is
// found through src/core/install.ts, never by a module's own URL.
//
//   node scripts/build.mjs            build dist/
//   node scripts/build.mjs --bench    also bench/ and test/ → dist-bench/ (see buildBench)
//   node scripts/build.mjs --if-stale build only when a file in src/ is newer than the last build
//
// The new tree is written beside dist/ and renamed into place, so a process
// running from dist/ meanwhile (a test's `quire` child) never reads a
// half-written file.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SRC = path.join(ROOT, 'src');
export const DIST = path.join(ROOT, 'dist');
const DIST_BENCH = path.join(ROOT, 'dist-bench');
/** Written last: its mtime is when dist/ was built. */
const STAMP = '.built';

function walk(dir, skip, out = []) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (skip.has(p)) continue;
    if (e.isDirectory()) walk(p, skip, out);
    else out.push(p);
  }
  return out;
}

/** Newest mtime under `dir`, folders included (a deleted file changes its folder's). */
function newest(dir) {
  let max = fs.statSync(dir).mtimeMs;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    max = Math.max(max, e.isDirectory() ? newest(p) : fs.statSync(p).mtimeMs);
  }
  return max;
}

/** Whether dist/ is missing or older than a file of src/, the spec's catalog (catalog.json is made from it) or this script. */
export function isStale() {
  const stamp = fs.statSync(path.join(DIST, STAMP), { throwIfNoEntry: false });
  if (stamp === undefined) return true;
  const inputs = [fileURLToPath(import.meta.url), path.join(ROOT, 'spec', 'actions.json')].map((f) => fs.statSync(f).mtimeMs);
  return Math.max(newest(SRC), ...inputs) > stamp.mtimeMs;
}

const OPTIONS = { format: 'esm', platform: 'node', target: 'node20', sourcemap: 'linked', logLevel: 'warning' };

/**
 * Packages whose hundreds of ES modules every start of the server loads,
 * each bundled into one file, dist/vendor/<name>.js, that dist/ imports
 * instead: @sinclair/typebox is 200 files (every action's input schema uses
 * it), and loading them one by one took 75-140 ms of each start where the
 * single file takes 5-10 ms (docs/performance.md, "Start-up"). Only
 * packages that nothing in node_modules imports belong here (there would be
 * two copies), and only pure ES modules (`export *` of a CommonJS package
 * exports nothing by name).
 */
const VENDORED = ['@sinclair/typebox'];
const vendorFile = (name) => `vendor/${name.replace(/^@/, '').replace(/\//g, '-')}.js`;

async function writeVendored(tree) {
  const { build } = await import('esbuild');
  for (const name of VENDORED) {
    const stdin = { contents: `export * from ${JSON.stringify(name)};`, resolveDir: ROOT, sourcefile: `${name}.js` };
    await build({ ...OPTIONS, stdin, bundle: true, outfile: path.join(tree, vendorFile(name)) });
  }
}

/** Points an output file's imports of a vendored package at its bundle. */
function useVendored(text, outFile, tree) {
  for (const name of VENDORED) {
    let rel = path.relative(path.dirname(outFile), path.join(tree, vendorFile(name)));
    if (!rel.startsWith('.')) rel = `./${rel}`;
    text = text.replaceAll(`from ${JSON.stringify(name)}`, `from ${JSON.stringify(rel)}`);
  }
  return text;
}

/**
 * The thin client (src/surfaces/cli/thin.ts with the daemon wire it imports)
 * as one CommonJS file, dist/surfaces/cli/thin.cjs, for the launcher
 * bin/quire.js (CommonJS too): a warm `--vault` call then never starts
 * Node's ES module loader, about 5 ms of a call that is otherwise a bare
 * start and a socket round trip (docs/cli.md, "Thin client"). It sits where
 * thin.js does, so its `import.meta.url`s (now its own file's URL) resolve
 * as they do from thin.js; its dynamic import of the daemon (`daemon run`)
 * loads the bundle's daemon entry.
 */
async function writeThinClient(tree) {
  const { build } = await import('esbuild');
  await build({
    ...OPTIONS,
    format: 'cjs',
    sourcemap: false,
    entryPoints: [path.join(SRC, 'surfaces/cli/thin.ts')],
    outfile: path.join(tree, 'surfaces/cli/thin.cjs'),
    bundle: true,
    // `daemon run` loads the daemon from the command line's bundle (writeCliBundle), like every other long-running command.
    plugins: [{ name: 'daemon-from-bundle', setup: (b) => b.onResolve({ filter: /^\.\.\/daemon\/daemon\.js$/ }, () => ({ path: '../../bundle/daemon.js', external: true })) }],
    define: { 'import.meta.url': '__fileUrl' },
    banner: { js: "'use strict';\nconst __fileUrl = require('node:url').pathToFileURL(__filename).href;" },
  });
}

/**
 * The native thin client (src/surfaces/cli/native/thin.c) compiled to
 * dist/surfaces/cli/native/thin, which the launcher bin/quire runs for a
 * `--vault` call: a warm call then starts no Node at all (docs/cli.md,
 * "Native thin client"). Without a C compiler (`cc`, or $CC) the build says
 * so and the launcher runs the Node thin client as before.
 */
function writeNativeClient(tree, lenient) {
  const cc = process.env.CC || 'cc';
  const out = path.join(tree, 'surfaces/cli/native/thin');
  try {
    execFileSync(cc, ['-std=c99', '-Wall', '-Wextra', '-O2', '-o', out, path.join(SRC, 'surfaces/cli/native/thin.c')], { stdio: ['ignore', 'inherit', 'inherit'] });
  } catch (e) {
    if (e.code !== 'ENOENT') {
      if (!lenient) throw e;
      console.error(`build: no native thin client (${cc} failed: ${e.message.split('\n')[0]})`);
      return;
    }
    console.error(`build: no C compiler (${cc}): no native thin client, --vault calls start Node (docs/cli.md, "Native thin client")`);
  }
}

/**
 * Packages that Fastify requires only inside the function that uses them, and that the
 * server never calls: its default schema compilers (routes take no Fastify schema:
 * src/surfaces/http/app.ts, `noRouteSchemas`), `inject`'s light-my-request, and its logger,
 * pino (the app is made with `logger: false`). Left out of the bundle (loaded from
 * node_modules if ever called), they are no longer compiled at every start: 0.55 MB of
 * 1.24 MB in the app chunk and a 95 KB chunk of pino's own (docs/performance.md, "Start-up").
 * Also semver (47 modules), which Fastify uses only to check the Fastify version a plugin
 * declares (none of the server's plugins declares one), once PACKAGE_EDITS has its require
 * moved to that use.
 */
const FASTIFY_UNCALLED = ['@fastify/ajv-compiler', '@fastify/fast-json-stringify-compiler', 'light-my-request', 'pino', 'semver'];

/** A PACKAGE_EDITS pair: the package's `const NAME = require(ID)` at its top becomes a require at the first property read. */
const requiredAtFirstUse = (name, id) => [
  `const ${name} = require('${id}')\n`,
  `const ${name} = new Proxy({}, { get: (_, key) => require('${id}')[key] }) // Quire's build: required only if used\n`,
];

/**
 * Edits of package files, in the bundle only, for what they do at every start that the server
 * never needs then (docs/performance.md, "Start-up"). Each must find its text exactly once, so a
 * new version of the package fails the build here instead of starting unedited.
 *
 * - find-my-way (Fastify's router) writes a JavaScript function for each node and handler as it
 *   adds a route: a prefix matcher per static node, a params builder and a constraints matcher
 *   per handler, each made with `new Function` (parsed and compiled there). The server's ~450
 *   routes made ~1,370 of them at every start, a third of building the app, though a request
 *   runs only the few of its own path. Each is now written at its first call: the same source,
 *   compiled from the same state (a handler's matcher is rewritten whenever its node gains a
 *   handler, so the last one is what runs either way).
 * - Fastify's server.js requires node:http2 and node:https at its top for its `http2` and `https`
 *   options, which Quire never sets: Node's HTTP/2 and TLS modules were compiled at every start
 *   (about 9 and 7 ms with the server's flags, which keep Node from using its code cache for its
 *   own modules). Each is required at first use (src/core/outbound.ts requires TLS at its first
 *   fetch).
 * - Fastify's plugin-utils.js requires semver at its top, to check the Fastify version a plugin
 *   declares: required at first use, and left out of the bundle (FASTIFY_UNCALLED).
 */
const PACKAGE_EDITS = {
  'find-my-way/lib/node.js': [
    [
      "  return new Function('path', 'i', `'use strict'\\nreturn ${lines.join(' && ')}`) // eslint-disable-line\n",
      "  let compiled = null\n  return function matchPrefix (path, i) {\n    return (compiled ??= new Function('path', 'i', `'use strict'\\nreturn ${lines.join(' && ')}`))(path, i) // eslint-disable-line\n  }\n",
    ],
  ],
  'find-my-way/lib/handler-storage.js': [
    [
      "    return new Function('NullObject', fnBody.join('\\n'))(NullObject)  // eslint-disable-line\n",
      "    let compiled = null\n    return function _createParamsObject (param0, param1, param2, param3, extraParams) {\n      return (compiled ??= new Function('NullObject', fnBody.join('\\n'))(NullObject))(param0, param1, param2, param3, extraParams) // eslint-disable-line\n    }\n",
    ],
    [
      "    this._getHandlerMatchingConstraints = new Function('derivedConstraints', lines.join('\\n')) // eslint-disable-line\n",
      "    let compiled = null\n    this._getHandlerMatchingConstraints = function (derivedConstraints) {\n      return (compiled ??= new Function('derivedConstraints', lines.join('\\n'))).call(this, derivedConstraints) // eslint-disable-line\n    }\n",
    ],
  ],
  'fastify/lib/plugin-utils.js': [
    requiredAtFirstUse('semver', 'semver'),
  ],
  'fastify/lib/server.js': [
    requiredAtFirstUse('https', 'node:https'),
    requiredAtFirstUse('http2', 'node:http2'),
  ],
};

/** The esbuild plugin that applies PACKAGE_EDITS. */
const packageEdits = {
  name: 'package-edits',
  setup(b) {
    const files = Object.keys(PACKAGE_EDITS).map((f) => f.replace(/[/.]/g, (c) => (c === '/' ? '[\\\\/]' : '\\.'))).join('|');
    b.onLoad({ filter: new RegExp(`[\\\\/]node_modules[\\\\/](${files})$`) }, (args) => {
      const file = Object.keys(PACKAGE_EDITS).find((f) => args.path.split(path.sep).join('/').endsWith(`/node_modules/${f}`));
      let text = fs.readFileSync(args.path, 'utf8');
      for (const [from, to] of PACKAGE_EDITS[file]) {
        const at = text.indexOf(from);
        if (at < 0 || text.indexOf(from, at + 1) >= 0) throw new Error(`${file} changed: PACKAGE_EDITS (scripts/build.mjs) no longer finds its text once`);
        text = text.replace(from, () => to);
      }
      return { contents: text, loader: 'js' };
    });
  },
};

/**
 * The full command line (src/surfaces/cli/main.ts) and the vault daemon
 * (src/surfaces/daemon/daemon.ts, which `daemon run` loads) with the
 * packages they import, as one bundle split at its dynamic imports:
 * dist/bundle/main.js, dist/bundle/daemon.js and shared chunks, each loaded when a command first needs it, so `--help` still
 * loads no server code. Hundreds of modules one file per file cost a start
 * of the server about 0.2-0.4 s of loading and compiling (docs/performance.md,
 * "Start-up"); Node 20 has no compile cache for ES modules. The rest of
 * dist/ stays one file per file: worker threads run those files (the
 * bundle's chunks are not entries), and so do the benches and tests of
 * built code; nothing of dist/ imports the bundle, so no process
 * holds two copies of a module. Kept outside: a vendored package (its one
 * file of dist/vendor/, as for the tree) and what a module loads with
 * createRequire (lazy CommonJS packages, native addons). CommonJS packages
 * bundled into ES modules call `require` for Node's built-ins: the banner
 * gives each chunk one. dist/bundle/inputs.json names each chunk's source
 * modules, for the tests that check what a command loads.
 */
async function writeCliBundle(tree) {
  const { build } = await import('esbuild');
  const vendored = {
    name: 'vendored',
    setup(b) {
      const names = new RegExp(`^(${VENDORED.map((n) => n.replace(/[/.]/g, '\\$&')).join('|')})$`);
      b.onResolve({ filter: names }, (args) => ({ path: `../${vendorFile(args.path)}`, external: true }));
    },
  };
  const out = path.join(tree, 'bundle');
  const result = await build({
    ...OPTIONS,
    absWorkingDir: ROOT,
    entryPoints: { main: path.join(SRC, 'surfaces/cli/main.ts'), daemon: path.join(SRC, 'surfaces/daemon/daemon.ts') },
    outdir: out,
    bundle: true,
    splitting: true,
    metafile: true,
    plugins: [vendored, packageEdits],
    external: FASTIFY_UNCALLED,
    banner: { js: "import { createRequire as __quireCreateRequire } from 'node:module';\nconst require = __quireCreateRequire(import.meta.url);" },
  });
  const inputs = {};
  for (const [file, o] of Object.entries(result.metafile.outputs)) {
    if (file.endsWith('.js')) inputs[path.basename(file)] = Object.keys(o.inputs);
  }
  fs.writeFileSync(path.join(out, 'inputs.json'), JSON.stringify(inputs));
}

/**
 * Transpile every .ts file of `from` into `to` (same layout), and with
 * `copyOthers` copy its other files; `rewrite(text, outFile)` edits each
 * output's text; `skip`: paths not to look into.
 */
async function transpileTree(from, to, { rewrite = (text) => text, copyOthers = false, skip = [] } = {}) {
  const { build } = await import('esbuild');
  const files = walk(from, new Set(skip));
  const ts = files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'));
  const result = await build({ ...OPTIONS, entryPoints: ts, outdir: to, outbase: from, write: false });
  for (const out of result.outputFiles) {
    fs.mkdirSync(path.dirname(out.path), { recursive: true });
    fs.writeFileSync(out.path, out.path.endsWith('.js') ? rewrite(out.text, out.path) : out.contents);
  }
  for (const f of copyOthers ? files : []) {
    if (f.endsWith('.ts')) continue;
    const dest = path.join(to, path.relative(from, f));
    fs.mkdirSync(path.dirname(dest), { recursive: true });
    fs.copyFileSync(f, dest);
  }
}

/** Build `dir` from `build(tmp)` into a sibling folder, then swap it in. */
async function swapIn(dir, buildInto) {
  const tmp = `${dir}.tmp-${process.pid}`;
  const old = `${dir}.old-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  try {
    await buildInto(tmp);
    // Two builds at once (two test runs starting): each swaps in a whole tree, and one that finds
    // the other's already in place leaves it there.
    try {
      fs.renameSync(dir, old);
    } catch (e) {
      if (e.code !== 'ENOENT') throw e;
    }
    try {
      fs.renameSync(tmp, dir);
    } catch (e) {
      if (e.code !== 'ENOTEMPTY' && e.code !== 'EEXIST') throw e;
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
    fs.rmSync(old, { recursive: true, force: true });
  }
}

/**
 * `lenient`: a registry that does not load (a source being edited) leaves
 * dist/ without catalog.json instead of failing; the commands that read it
 * then load the registry themselves. The tests' global setup builds so, so
 * that one broken area does not stop every test file.
 */
export async function buildDist({ lenient = false } = {}) {
  await swapIn(DIST, async (tmp) => {
    await transpileTree(SRC, tmp, { copyOthers: true, rewrite: (text, outFile) => useVendored(text, outFile, tmp) });
    await writeVendored(tmp);
    await writeThinClient(tmp);
    writeNativeClient(tmp, lenient);
    try {
      await writeCliBundle(tmp);
    } catch (e) {
      if (!lenient) throw e;
      // A source being edited that does not bundle yet (an import of a file not written): the command line runs from the tree.
      console.error(`build: no command-line bundle (${e.message.split('\n')[0]})`);
      fs.mkdirSync(path.join(tmp, 'bundle'), { recursive: true });
      fs.writeFileSync(path.join(tmp, 'bundle/main.js'), "import '../surfaces/cli/main.js';\n");
      fs.writeFileSync(path.join(tmp, 'bundle/daemon.js'), "export * from '../surfaces/daemon/daemon.js';\n");
      fs.writeFileSync(path.join(tmp, 'bundle/inputs.json'), '{}');
    }
    try {
      writeCatalog(tmp);
    } catch (e) {
      if (!lenient) throw e;
      console.error(`build: no catalog.json (the registry did not load: ${e.message.split('\n')[0]})`);
    }
    fs.writeFileSync(path.join(tmp, STAMP), `${new Date().toISOString()}\n`);
  });
}

/**
 * The registry's actions without their handlers, as JSON, for the commands
 * that need only the facts (src/surfaces/cli/catalog.ts): written by a
 * process that loads the built registry once, here.
 */
function writeCatalog(tree) {
  const url = (rel) => JSON.stringify(new URL(rel, `file://${tree}/`).href);
  const code = [
    `import fs from 'node:fs';`,
    `import { registry } from ${url('actions/registry.js')};`,
    `import { catalogEntries } from ${url('surfaces/cli/catalog.js')};`,
    `fs.writeFileSync(new URL('surfaces/cli/catalog.json', ${url('./')}), JSON.stringify(catalogEntries(registry)));`,
    `process.exit(0);`,
  ].join('\n');
  execFileSync(process.execPath, ['--input-type=module', '-e', code], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
}

/**
 * The benchmark scripts run compiled too (their figures are the built
 * server's, with no TypeScript loader in the process): bench/ and test/
 * (whose vault generator and reference extractor the bench uses) →
 * dist-bench/bench/ and dist-bench/test/, their imports of `…/src/x.js`
 * pointed at `…/dist/x.js`, one folder further up.
 */
export async function buildBench() {
  const toDist = (text) => text.replace(/(["'])((?:\.\.\/)+)src\//g, '$1../$2dist/');
  await swapIn(DIST_BENCH, async (tmp) => {
    for (const tree of ['bench', 'test']) {
      // bench/vaults/ holds the generated vaults (git-ignored), not code.
      await transpileTree(path.join(ROOT, tree), path.join(tmp, tree), { rewrite: toDist, skip: [path.join(ROOT, 'bench', 'vaults')] });
    }
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const started = performance.now();
  if (!args.includes('--if-stale') || isStale()) {
    await buildDist();
    if (!args.includes('--quiet')) console.error(`built dist/ in ${Math.round(performance.now() - started)} ms`);
  }
  if (args.includes('--bench')) await buildBench();
}
