/**
 * Home files (extension actions): list a folder, read a file (raw bytes over
 * HTTP with Range; base64 on the action surfaces), write one (If-Match, or
 * If-None-Match: * to create), delete one.
 */
import path from 'node:path';
import { reply } from '../actions/reply.js';
import { AppError, errors } from '../core/errors.js';
import { isIgnoredPath } from '../vault/ignore.js';
import { checkServerMayChange, validateRelPath } from '../vault/paths.js';
import { checkVisible, checkWritable, visible, type Scope } from './access.js';

const TYPES: Record<string, string> = {
  '.md': 'text/markdown; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.base': 'application/yaml; charset=utf-8',
  '.yaml': 'application/yaml; charset=utf-8',
  '.yml': 'application/yaml; charset=utf-8',
  '.json': 'application/json',
  '.canvas': 'application/json',
  '.ics': 'text/calendar; charset=utf-8',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.svg': 'image/svg+xml',
  '.pdf': 'application/pdf',
};

export const contentTypeOf = (p: string) => TYPES[path.extname(p).toLowerCase()] ?? 'application/octet-stream';

export async function listFolder(scope: Scope, folder = '') {
  const f = folder.replace(/\/+$/, '');
  const entries = await scope.vault.home.list(f);
  const shown = entries.filter(
    (e) => visible(scope, e.kind === 'folder' ? `${e.path}/` : e.path) || (scope.prefix !== null && scope.prefix.startsWith(`${e.path}/`)),
  );
  return { items: shown, next_cursor: null };
}

/** Parses a single `bytes=a-b` range; multi-range requests are answered whole. */
function parseRange(header: string | undefined, size: number): { start: number; end: number } | null {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null;
  let start: number;
  let end: number;
  if (m[1] === '') {
    start = Math.max(0, size - Number(m[2]));
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  if (start >= size || start > end) {
    throw new AppError('bad_request', `Range ${header} is outside the file (${size} bytes)`, {
      status: 416,
      details: { field: 'headers.range' },
      headers: { 'content-range': `bytes */${size}` },
    });
  }
  return { start, end };
}

export async function readFile(scope: Scope, rel: string, range?: string) {
  checkVisible(scope, rel);
  const { bytes, etag } = await scope.vault.home.read(rel);
  const r = parseRange(range, bytes.length);
  const contentType = contentTypeOf(rel);
  if (!r) return reply(bytes, { etag, contentType, headers: { 'accept-ranges': 'bytes' } });
  return reply(bytes.subarray(r.start, r.end + 1), {
    status: 206,
    etag,
    contentType,
    headers: { 'accept-ranges': 'bytes', 'content-range': `bytes ${r.start}-${r.end}/${bytes.length}` },
  });
}

export async function writeFile(
  scope: Scope,
  rel: string,
  body: { content?: string; content_base64?: string },
  cond: { ifMatch?: string; ifNoneMatch?: string },
) {
  if ((body.content === undefined) === (body.content_base64 === undefined)) {
    throw errors.badRequest('Send exactly one of content (UTF-8 text) or content_base64', { field: 'body' });
  }
  if (cond.ifMatch === undefined && cond.ifNoneMatch !== '*') {
    throw errors.preconditionRequired('If-Match');
  }
  // Internals get their own refusal (403 internal_path) before the ignore list's editor and temporary files.
  validateRelPath(rel);
  checkServerMayChange(rel);
  if (isIgnoredPath(rel)) {
    throw errors.badRequest(`${rel} is not vault content (internal, version-control or editor temporary file)`, { field: 'query.path' });
  }
  checkWritable(scope, rel);
  const bytes = body.content !== undefined ? Buffer.from(body.content, 'utf8') : Buffer.from(body.content_base64!, 'base64');
  const r = await scope.vault.home.write(rel, bytes, {
    ifMatch: cond.ifMatch,
    ifNoneMatch: cond.ifNoneMatch === '*' ? '*' : undefined,
    quotaBytes: scope.quotaBytes,
  });
  return reply({ path: r.path, etag: r.etag, size: r.bytesWritten, created: r.created }, { status: r.created ? 201 : 200, etag: r.etag });
}

export async function deleteFile(scope: Scope, rel: string, ifMatch: string) {
  checkWritable(scope, rel);
  const r = await scope.vault.home.delete(rel, { ifMatch });
  return { deleted: r.path, folder: r.folder };
}
