/**
 * The DAV tree on the HTTP surface. Fastify 5 routes only the methods it
 * knows, so PROPFIND, PROPPATCH, REPORT, MKCALENDAR and MKCOL are added with
 * `addHttpMethod` (as methods with a body) rather than taking requests raw in
 * a hook: the routes then keep what every other route has — the per-address
 * connection limit, request timeouts, the failed-credential throttle
 * (accounts/rate-limit.ts counts the 401s), the request counter and HEAD for
 * GET. The routes live in their own plugin so that its body parser (every
 * body as text: XML, iCalendar, or a client's odd Content-Type) does not
 * change the API's JSON parsing.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { onFirstUse } from '../core/first-use.js';
import type { Services } from '../core/services.js';
import { WELL_KNOWN } from './paths.js';

// The handlers (the calendar's events, ical.js) are loaded by the first CalDAV request, not by every start, then kept.
export const davHandlers = onFirstUse(() => import('./handlers.js'));

const DAV_ONLY = ['PROPFIND', 'PROPPATCH', 'REPORT', 'MKCALENDAR', 'MKCOL'];
const METHODS = ['OPTIONS', 'GET', 'PUT', 'DELETE', ...DAV_ONLY];

export function registerCalDav(app: FastifyInstance, services: Services): void {
  for (const m of DAV_ONLY) app.addHttpMethod(m, { hasBody: true, overrideExisting: true });
  app.register(async (dav) => {
    dav.removeAllContentTypeParsers();
    dav.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));
    const handler = async (req: FastifyRequest, res: FastifyReply) => {
      const out = await (await davHandlers()).handleDav(services, {
        method: req.method,
        path: req.url.split('?')[0]!,
        headers: req.headers,
        body: typeof req.body === 'string' ? req.body : '',
      });
      res.code(out.status).headers(out.headers);
      return res.send(out.body ?? '');
    };
    for (const url of ['/dav', '/dav/*', WELL_KNOWN, `${WELL_KNOWN}/`]) dav.route({ method: METHODS, url, handler });
    // The root's GET is the web app's; a PROPFIND there is a calendar app looking for the DAV tree.
    dav.route({ method: 'PROPFIND', url: '/', handler });
  });
}
