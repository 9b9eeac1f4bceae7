/**
 * Media types by file name, and which files a browser can be shown as they are. Pure.
 * Text of any kind (HTML, SVG source aside) is previewed as text/plain: a shared `.html` file
 * must never run as a page of this site.
 */
const TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  avif: 'image/avif',
  bmp: 'image/bmp',
  ico: 'image/x-icon',
  svg: 'image/svg+xml',
  pdf: 'application/pdf',
  md: 'text/markdown; charset=utf-8',
  txt: 'text/plain; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  json: 'application/json',
  html: 'text/html; charset=utf-8',
  htm: 'text/html; charset=utf-8',
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  xml: 'application/xml',
  zip: 'application/zip',
  mp3: 'audio/mpeg',
  mp4: 'video/mp4',
  webm: 'video/webm',
  ogg: 'audio/ogg',
  wav: 'audio/wav',
  canvas: 'application/json',
};

const extOf = (name: string) => {
  const base = name.slice(name.lastIndexOf('/') + 1);
  const dot = base.lastIndexOf('.');
  return dot <= 0 ? '' : base.slice(dot + 1).toLowerCase();
};

export function mimeOf(name: string): string | null {
  return TYPES[extOf(name)] ?? null;
}

const AS_IS = new Set(['png', 'jpg', 'jpeg', 'gif', 'webp', 'avif', 'bmp', 'ico', 'svg', 'pdf']);
const TEXT_SNIFF = 8192;

/** True when the first bytes hold no NUL and decode as UTF-8 (a cut multi-byte character at the end aside). */
export function looksLikeText(bytes: Buffer): boolean {
  const head = bytes.subarray(0, TEXT_SNIFF);
  if (head.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head.length === TEXT_SNIFF ? head.subarray(0, head.length - 4) : head);
    return true;
  } catch {
    return false;
  }
}

/** How a file is previewed: a note as HTML, an image or PDF as it is, other UTF-8 text as plain text; null for none. */
export function previewKind(name: string, bytes: Buffer): 'note' | 'as_is' | 'text' | null {
  const ext = extOf(name);
  if (ext === 'md') return 'note';
  if (AS_IS.has(ext)) return 'as_is';
  return looksLikeText(bytes) ? 'text' : null;
}
