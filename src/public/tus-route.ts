/**
 * Which requests are the file drop's tus requests. Kept apart from the tus
 * server (tus.ts) so that the HTTP hook can tell them without loading it:
 * @tus/server and its store (about 40 modules) load when the first upload
 * arrives, not when the server starts (docs/performance.md, "Start-up").
 */
const ROUTE = /^\/api\/v1\/public\/([^/?#]+)\/uploads(?:\/([^/?#]+))?\/?(?:[?#].*)?$/;

/** `/api/v1/public/{slug}/uploads[/{id}]` → slug and id, or null for any other path. */
export function tusRoute(url: string): { slug: string; id: string | null } | null {
  const m = ROUTE.exec(url);
  if (!m) return null;
  try {
    return { slug: decodeURIComponent(m[1]!), id: m[2] === undefined ? null : decodeURIComponent(m[2]) };
  } catch {
    return null;
  }
}
