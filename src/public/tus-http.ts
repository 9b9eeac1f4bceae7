/**
 * The HTTP side of the file drop. The four `public_upload_*` routes are the spec's routes, but a
 * tus request is not a JSON call: its body is the raw bytes (`application/offset+octet-stream`),
 * often far larger than any body the API parses, and its answers live in headers. So a hook
 * takes these requests before Fastify parses a body and gives the socket's own stream to the
 * tus server (src/public/tus.ts), which writes it to disk as it arrives. The command line and
 * MCP call the same actions through dispatch with base64 bodies (upload-actions.ts).
 * Also serves tus-js-client's browser build for the page's drop zone.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../core/services.js';
import { isPasswordGuess } from './page-token.js';
import { recordIpFailure } from './passwords.js';
import { tusRoute } from './tus-route.js';

/** The tus server, loaded at the first upload (tus-route.ts). */
const tusServer = () => import('./tus.js');

const TUS_METHODS = new Set(['POST', 'HEAD', 'PATCH', 'DELETE', 'OPTIONS']);
const require = createRequire(import.meta.url);
const TUS_CLIENT = fs.readFileSync(require.resolve('tus-js-client/dist/tus.min.js'), 'utf8');

const ASSET_HEADERS = {
  'content-security-policy': "default-src 'none'",
  'x-content-type-options': 'nosniff',
  'cache-control': 'public, max-age=86400',
};

/**
 * Registered after the public pages' hooks, which have by then turned the page's password cookie
 * into `X-Public-Password` and refused an address over the password limit.
 */
export function registerFileDrop(app: FastifyInstance, services: Services): void {
  app.addHook('onRequest', (req: FastifyRequest, res: FastifyReply, done: () => void) => {
    if (!TUS_METHODS.has(req.method) || !req.url.startsWith('/api/v1/public/')) return done();
    const route = tusRoute(req.url);
    // The collection takes POST (and OPTIONS); an upload takes HEAD, PATCH and DELETE.
    if (!route || (route.id === null) !== (req.method === 'POST' || req.method === 'OPTIONS')) return done();
    // A JSON body is the spec's base64 encoding (the command line, MCP): the action route decodes it.
    if ((req.headers['content-type'] ?? '').toLowerCase().startsWith('application/json')) return done();
    res.hijack();
    const password = req.headers['x-public-password'];
    tusServer()
      .then(({ serveTus }) => serveTus(services, req.raw, res.raw, typeof password === 'string' ? password : undefined))
      .then(
        (status) => {
          // A refused page grant is no password guess, as for the other visitor actions.
          if (status === 401 && isPasswordGuess(password)) recordIpFailure(req.ip);
        },
        (e) => {
          console.error('[quire] file drop:', e);
          res.raw.destroy();
        },
      );
  });
  app.get('/assets/tus.min.js', (_req, res) => res.headers(ASSET_HEADERS).type('text/javascript; charset=utf-8').send(TUS_CLIENT));
}
