import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startTsWorker } from '../../src/core/ts-worker.js';
import { etagOf } from '../../src/vault/etag.js';

const entry = new URL('../helpers/echo-worker.ts', import.meta.url);
const REPO = fileURLToPath(new URL('../..', import.meta.url));
const RUN_TS = path.join(REPO, 'bin', 'run-ts.js');
const bundleDir = path.join(os.tmpdir(), `quire-workers-${process.getuid?.() ?? 'user'}`);

async function ask(text: string, from = entry) {
  const w = startTsWorker(from, { n: 7 }, 'echo');
  try {
    w.postMessage(text);
    return { reply: await new Promise<any>((resolve, reject) => (w.once('message', resolve), w.once('error', reject))), w };
  } finally {
    await w.terminate();
  }
}

describe('TypeScript worker threads', () => {
  it('run a TypeScript entry bundled into one module, CommonJS packages included, with workerData', async () => {
    const text = '---\ntitle: Hi\n---\nbody';
    const { reply } = await ask(text);
    expect(reply).toMatchObject({ etag: etagOf(Buffer.from(text)), data: { title: 'Hi' }, given: { n: 7 } });
    const bundle = new URL(reply.url as string);
    expect(path.dirname(bundle.pathname)).toBe(bundleDir);
    expect(path.basename(bundle.pathname)).toMatch(/^echo-worker-[0-9a-f]{16}\.mjs$/);
    const bundles = fs.readdirSync(bundleDir).filter((f) => f.startsWith('echo-worker-') && f.endsWith('.mjs'));
    // A second worker reuses the process's bundle.
    expect((await ask('x')).reply.url).toBe(reply.url);
    expect(fs.readdirSync(bundleDir).filter((f) => f.startsWith('echo-worker-') && f.endsWith('.mjs'))).toEqual(bundles);
  });

  it('reuse a bundle across processes while none of its source files changed', () => {
    const run = () => execFileSync(process.execPath, [RUN_TS, 'test/helpers/echo-worker-url.ts'], { cwd: REPO, encoding: 'utf8' }).trim();
    const first = run();
    const manifests = () =>
      fs
        .readdirSync(bundleDir)
        .filter((f) => f.startsWith('echo-worker-') && f.endsWith('.json'))
        .map((f) => [f, fs.statSync(path.join(bundleDir, f)).mtimeMs] as const);
    const before = manifests();
    expect(before.length).toBeGreaterThan(0);
    expect(run()).toBe(first);
    // Not rebuilt: a rebuild rewrites the manifest.
    expect(manifests()).toEqual(before);
    expect(first).toMatch(/^file:.*\/echo-worker-[0-9a-f]{16}\.mjs$/);
  });

  it('start through tsx when bundling is switched off', async () => {
    process.env['QUIRE_WORKER_BUNDLE'] = '0';
    try {
      const { reply } = await ask('---\ntitle: T\n---\n', new URL('../helpers/echo-worker.ts?unbundled', import.meta.url));
      expect(reply).toMatchObject({ data: { title: 'T' }, given: { n: 7 } });
      expect(reply.url).toMatch(/\/test\/helpers\/echo-worker\.ts/);
    } finally {
      delete process.env['QUIRE_WORKER_BUNDLE'];
    }
  });
});
