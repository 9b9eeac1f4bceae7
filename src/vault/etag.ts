/**
 * ETags are a hash of a file's bytes, so the same bytes always have the same
 * ETag whoever wrote them (the server, Obsidian, vim, `git checkout`).
 *
 * Format: the whole SHA-256 digest in base64url without padding (43
 * characters, `[A-Za-z0-9_-]`). The value is stored and compared without
 * quotes; surfaces send it quoted (`ETag: "<value>"`, see formatEtag). In
 * If-Match the helpers accept the quoted form, a bare value, the weak form
 * `W/"…"` (some proxies weaken ETags when they compress; the bytes hash is
 * still exact, so weak and strong compare equal here), a comma-separated
 * list, and `*`.
 */
import { hash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fsError } from './errors.js';

/** One call, no Hash object: the scan threads hash every note of a Home opened without a snapshot. */
export function etagOf(bytes: Uint8Array | string): string {
  return hash('sha256', bytes, 'base64url');
}

/** The header form: `"<etag>"`. */
export function formatEtag(etag: string): string {
  return `"${etag}"`;
}

/** `"x"`, `W/"x"`, `x` → `x`. Whitespace around is ignored. */
export function normalizeEtag(value: string): string {
  let v = value.trim();
  if (v.startsWith('W/') || v.startsWith('w/')) v = v.slice(2).trim();
  if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1);
  return v;
}

/** Splits an If-Match / If-None-Match header into normalised tags; `['*']` for `*`. Commas never occur inside our values. */
export function parseEtagList(header: string): string[] {
  return header
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((s) => (s === '*' ? '*' : normalizeEtag(s)));
}

/**
 * Does an If-Match value accept the current ETag? `current === null` means
 * the file does not exist, which no If-Match value accepts (not even `*`).
 */
export function ifMatchAccepts(ifMatch: string, current: string | null): boolean {
  if (current === null) return false;
  return parseEtagList(ifMatch).some((t) => t === '*' || t === current);
}

/** Whether `If-Match` was meaningfully given (null, undefined and blank mean "no condition"). */
export function hasCondition(v: string | null | undefined): v is string {
  return typeof v === 'string' && v.trim() !== '';
}

export interface BytesWithEtag {
  bytes: Buffer;
  etag: string;
}

/**
 * Reads a file and its ETag. Returns null when it does not exist. Other
 * failures are AppErrors naming `label` (the Home-relative path; default the
 * file name): a folder at the path is `conflict` / `is_a_folder`.
 */
export async function readWithEtag(absPath: string, label?: string): Promise<BytesWithEtag | null> {
  let bytes: Buffer;
  try {
    bytes = await readFile(absPath);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw fsError(e, 'read', label ?? path.basename(absPath));
  }
  return { bytes, etag: etagOf(bytes) };
}
