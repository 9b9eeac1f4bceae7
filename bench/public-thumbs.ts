/**
 * Thumbnails of a shared folder of photos (docs/benchmarks.md, "Public link thumbnails"):
 * 200 JPEG photos (2400×1600 by default, made with sharp from noise so they compress like
 * photos), one folder link, `public_thumb` with s=256 for each over HTTP on loopback, one at a
 * time: first cold (scaled with sharp, written to the cache), then cached. Goals: p99 ≤ 150 ms
 * cold, ≤ 5 ms cached.
 *
 *   npx tsx bench/public-thumbs.ts [--photos 200] [--width 2400] [--height 1600]
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { startServer } from '../src/server.js';
import { addUser } from '../src/surfaces/cli/admin.js';
import { BENCH_DIR, parseArgs, summarize } from './lib.js';

export const THUMB_GOALS = { coldP99Ms: 150, cachedP99Ms: 5 };

async function photo(width: number, height: number, seed: number): Promise<Buffer> {
  // Coarse noise scaled up (soft shapes) plus fine grain: JPEG sizes like a camera's (about
  // 1 MB at 4 MP), not a flat fill's.
  const coarse = await sharp({ create: { width: Math.ceil(width / 40), height: Math.ceil(height / 40), channels: 3, background: { r: seed % 256, g: 90, b: 160 }, noise: { type: 'gaussian', mean: 120 + (seed % 40), sigma: 60 } } })
    .resize(width, height, { kernel: 'cubic' })
    .raw()
    .toBuffer();
  const grain = randomBytes(coarse.length);
  for (let i = 0; i < coarse.length; i++) coarse[i] = Math.min(255, Math.max(0, coarse[i]! + (grain[i]! & 31) - 16));
  return sharp(coarse, { raw: { width, height, channels: 3 } }).jpeg({ quality: 88 }).toBuffer();
}

export async function runPublicThumbBench(opts: { photos?: number; width?: number; height?: number; log?: (line: string) => void } = {}) {
  const photos = opts.photos ?? 200;
  const width = opts.width ?? 2400;
  const height = opts.height ?? 1600;
  const log = opts.log ?? ((l: string) => console.log(l));
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quire-bench-thumbs-'));
  const server = await startServer({ dataDir, host: '127.0.0.1', port: 0, log: () => undefined });
  try {
    const { token } = await addUser(server.services, { username: 'thumbs', role: 'member' });
    const dir = path.join(dataDir, 'homes', 'thumbs', 'Photos');
    fs.mkdirSync(path.dirname(dir), { recursive: true });
    // Made once and kept under bench/vaults/ (ignored by git): making them takes minutes on a loaded machine.
    const made = path.join(BENCH_DIR, 'vaults', `thumb-photos-${photos}-${width}x${height}`);
    if (!fs.existsSync(path.join(made, 'done'))) {
      const t0 = performance.now();
      fs.mkdirSync(made, { recursive: true });
      for (let i = 0; i < photos; i++) fs.writeFileSync(path.join(made, `IMG_${String(i).padStart(4, '0')}.jpg`), await photo(width, height, i + 1));
      fs.writeFileSync(path.join(made, 'done'), '');
      log(`public thumbs: made ${photos} photos in ${Math.round(performance.now() - t0)} ms (kept in ${path.relative(process.cwd(), made)})`);
    }
    fs.cpSync(made, dir, { recursive: true, filter: (f) => !f.endsWith('done') });
    const bytes = fs.readdirSync(dir).reduce((n, f) => n + fs.statSync(path.join(dir, f)).size, 0);
    log(`public thumbs: ${photos} photos ${width}×${height}, ${Math.round(bytes / photos / 1024)} KB average; s=256, one request at a time`);
    const res = await fetch(`${server.url}/api/v1/links`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ target: { kind: 'folder', path: 'Photos' } }),
    });
    const { slug } = (await res.json()) as { slug: string };
    await fetch(`${server.url}/api/v1/public/${slug}`).then((r) => r.arrayBuffer());
    const pass = async () => {
      const ms: number[] = [];
      for (let i = 0; i < photos; i++) {
        const s = performance.now();
        const r = await fetch(`${server.url}/api/v1/public/${slug}/thumb?path=IMG_${String(i).padStart(4, '0')}.jpg&s=256`);
        await r.arrayBuffer();
        if (r.status !== 200) throw new Error(`thumb ${i}: ${r.status}`);
        ms.push(performance.now() - s);
      }
      return summarize(ms);
    };
    const cold = await pass();
    const cached = await pass();
    const verdicts = { cold: cold.p99 <= THUMB_GOALS.coldP99Ms, cached: cached.p99 <= THUMB_GOALS.cachedP99Ms };
    log(`  cold   p50 ${cold.p50} ms  p99 ${cold.p99} ms  max ${cold.max} ms  (goal p99 ≤ ${THUMB_GOALS.coldP99Ms} ms: ${verdicts.cold ? 'met' : 'MISSED'})`);
    log(`  cached p50 ${cached.p50} ms  p99 ${cached.p99} ms  max ${cached.max} ms  (goal p99 ≤ ${THUMB_GOALS.cachedP99Ms} ms: ${verdicts.cached ? 'met' : 'MISSED'})`);
    return { photos, width, height, avgKB: Math.round(bytes / photos / 1024), cold, cached, verdicts };
  } finally {
    await server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const a = parseArgs(process.argv.slice(2));
  await runPublicThumbBench({
    photos: a.photos ? Number(a.photos) : undefined,
    width: a.width ? Number(a.width) : undefined,
    height: a.height ? Number(a.height) : undefined,
  });
}
