/**
 * Fetches one web page for a clip through the shared outbound fetch
 * (src/core/outbound.ts: address checks, redirects, deadline, size limit),
 * accepting only HTML. Every refusal is a 400 `bad_request` with a precise
 * `details.reason`.
 */
import { checkScheme as checkOutboundScheme, outboundFetch, refuse, type OutboundLimits } from '../core/outbound.js';

export { refuse, DEFAULT_MAX_BYTES, DEFAULT_TIMEOUT_MS, DEFAULT_MAX_REDIRECTS } from '../core/outbound.js';

/** Limits of one clip fetch; `allowPrivate` is Config.allowPrivateFetch (QUIRE_FETCH_ALLOW_PRIVATE=1). */
export type FetchLimits = OutboundLimits;

export interface FetchedPage {
  /** The address after redirects: relative links resolve against it. */
  finalUrl: URL;
  html: string;
  contentType: string;
}

const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);

/** Checks the scheme of one hop. */
export const checkScheme = (url: URL): void => checkOutboundScheme(url, 'clipped');

/** The charset from the Content-Type header, else from a `<meta>` near the start, else UTF-8. */
export function decodeHtml(bytes: Buffer, contentType: string): string {
  let label = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType)?.[1];
  if (!label) {
    const head = bytes.subarray(0, 4096).toString('latin1');
    label = /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(head)?.[1];
  }
  try {
    return new TextDecoder(label ?? 'utf-8').decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}

/** The page at `input`, through the shared outbound fetch (src/core/outbound.ts), refused unless it is HTML. */
export async function fetchPage(input: string | URL, limits: FetchLimits): Promise<FetchedPage> {
  const url = typeof input === 'string' ? new URL(input) : input;
  checkScheme(url);
  let contentType = '';
  const res = await outboundFetch(url, {
    ...limits,
    noun: 'The page',
    headers: {
      'user-agent': 'Mozilla/5.0 (compatible; QuireClipper/1)',
      accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.1',
    },
    onHeaders: ({ status, headers, url: at }) => {
      if (status < 200 || status >= 300) throw refuse('fetch_failed', `The page answered HTTP ${status}`, { url: at.href, status: String(status) });
      contentType = String(headers['content-type'] ?? '');
      const mime = contentType.split(';')[0]!.trim().toLowerCase();
      if (!HTML_TYPES.has(mime)) {
        throw refuse('not_html', `Only HTML pages can be clipped, this one is ${mime || 'untyped'}`, { url: at.href, content_type: mime });
      }
    },
  });
  return { finalUrl: res.url, html: decodeHtml(res.body, contentType), contentType: contentType.split(';')[0]!.trim().toLowerCase() };
}
