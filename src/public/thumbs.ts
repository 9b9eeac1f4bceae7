/**
 * Thumbnails of images in public links, made with sharp and kept outside every Home under
 * `<data>/state/cache/thumbs/`, named by the source's content hash and the size: the same photo
 * shared twice, or renamed, is scaled once; a changed photo gets a new name. The cache is safe
 * to delete. A file's hash is remembered by (path, inode, size, mtime), so a cached thumbnail
 * costs a stat and one small read, not a hash of the photo.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import type sharpOf from 'sharp';
import type { Metadata, Sharp } from 'sharp';
import { AppError, errors } from '../core/errors.js';
import { etagOf } from '../vault/etag.js';
import { writeFileAtomic } from '../vault/atomic.js';

/** sharp (a native library) is loaded at the first thumbnail, not at every server's start (docs/performance.md, "Start-up"). */
const sharp = () => createRequire(import.meta.url)('sharp') as typeof sharpOf;

export const THUMB_DEFAULT = 256;
export const THUMB_MAX = 2048;
const THUMB_KINDS = new Set(['jpeg', 'png', 'webp', 'gif', 'avif', 'tiff']);
const HASH_MEMO_MAX = 20_000;

/** `s` as asked (0 = the default), or a 400 naming the accepted range. */
export function thumbSize(s: number): number {
  if (s === 0) return THUMB_DEFAULT;
  if (s > THUMB_MAX) throw errors.badRequest(`s is the thumbnail's longest side in pixels, 1 to ${THUMB_MAX} (0 for ${THUMB_DEFAULT})`, { field: 'query.s' });
  return s;
}

export interface ThumbSource {
  abs: string;
  size: number;
  mtimeMs: number;
  ino: number;
  read(): Promise<Buffer>;
}

export interface Thumb {
  bytes: Buffer;
  contentType: string;
  etag: string;
}

const hashes = new Map<string, string>();

async function sourceHash(src: ThumbSource, bytes: () => Promise<Buffer>): Promise<string> {
  const key = `${src.abs}\0${src.ino}\0${src.size}\0${src.mtimeMs}`;
  let h = hashes.get(key);
  if (h === undefined) {
    h = etagOf(await bytes());
    hashes.set(key, h);
    if (hashes.size > HASH_MEMO_MAX) hashes.delete(hashes.keys().next().value!);
  }
  return h;
}

export class ThumbCache {
  constructor(readonly dir: string) {}

  private fileFor(hash: string, s: number, ext: string) {
    return path.join(this.dir, hash.slice(0, 2), `${hash}-${s}.${ext}`);
  }

  async get(src: ThumbSource, s: number): Promise<Thumb> {
    let bytes: Buffer | null = null;
    const load = async () => (bytes ??= await src.read());
    const hash = await sourceHash(src, load);
    for (const [ext, type] of [['jpg', 'image/jpeg'], ['png', 'image/png']] as const) {
      // Synchronous: a thumbnail is a few KB in the page cache; the thread pool is busy scaling others.
      try {
        return { bytes: readFileSync(this.fileFor(hash, s, ext)), contentType: type, etag: `${hash}-${s}` };
      } catch {
        /* not made yet */
      }
    }
    const made = await makeThumb(await load(), s);
    await writeFileAtomic(this.fileFor(hash, s, made.ext), made.bytes).catch(() => undefined);
    return { bytes: made.bytes, contentType: made.ext === 'jpg' ? 'image/jpeg' : 'image/png', etag: `${hash}-${s}` };
  }
}

/** Scales an image so its longest side is at most `s` (never up); JPEG, or PNG when it has transparency. */
export async function makeThumb(input: Buffer, s: number): Promise<{ bytes: Buffer; ext: 'jpg' | 'png' }> {
  let img: Sharp;
  let meta: Metadata;
  try {
    img = sharp()(input, { failOn: 'error', limitInputPixels: 100_000_000 });
    meta = await img.metadata();
  } catch {
    throw noThumb();
  }
  if (!meta.format || !THUMB_KINDS.has(meta.format)) throw noThumb();
  // rotate(): phones store portrait photos sideways with an EXIF orientation.
  const scaled = img.rotate().resize(s, s, { fit: 'inside', withoutEnlargement: true });
  try {
    return meta.hasAlpha
      ? { bytes: await scaled.png({ compressionLevel: 6 }).toBuffer(), ext: 'png' }
      : { bytes: await scaled.jpeg({ quality: 80, mozjpeg: false }).toBuffer(), ext: 'jpg' };
  } catch {
    throw noThumb();
  }
}

const noThumb = () =>
  new AppError('bad_request', 'This file is not an image a thumbnail can be made of (JPEG, PNG, WebP, GIF, AVIF, TIFF)', {
    status: 415,
    details: { reason: 'no_thumbnail' },
  });
