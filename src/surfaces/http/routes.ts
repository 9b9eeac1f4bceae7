/**
 * Turns a spec route into a Fastify route. `{name}` becomes `:name`; a final
 * `{path}` or `{tag}` becomes a wildcard so Home paths (`Notes/a.md`) and
 * nested tags (`project/alpha`) can be sent with plain slashes.
 */
const WILDCARD_PARAMS = new Set(['path', 'tag']);

export interface FastifyRoute {
  url: string;
  /** The spec param delivered in Fastify's `*`, if any. */
  wildcard: string | null;
}

export function toFastifyRoute(route: string): FastifyRoute {
  const m = /\{([a-z_]+)\}$/.exec(route);
  if (m && WILDCARD_PARAMS.has(m[1]!)) {
    return { url: route.slice(0, m.index) + '*', wildcard: m[1]! };
  }
  return { url: route.replace(/\{([a-z_]+)\}/g, ':$1'), wildcard: null };
}

/** Fills a spec route's placeholders from path values (the client side of the same mapping). */
export function fillRoute(route: string, values: Record<string, unknown>): string {
  const { wildcard } = toFastifyRoute(route);
  return route.replace(/\{([a-z_]+)\}/g, (_, name: string) => {
    const v = values[name];
    if (v === undefined || v === null || v === '') {
      throw new Error(`path parameter "${name}" is required`);
    }
    const s = String(v);
    return name === wildcard ? s.split('/').map(encodeURIComponent).join('/') : encodeURIComponent(s);
  });
}
