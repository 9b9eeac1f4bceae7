/**
 * The public feed URL on the HTTP surface: `GET /feeds/<token>.ics` (and HEAD), no bearer
 * token. Unknown, rotated and revoked tokens answer the same 404.
 */
import type { FastifyInstance } from 'fastify';
import type { Services } from '../core/services.js';
import { FEED_ROUTE_PREFIX, serveFeed } from './feed.js';
import { calendarFeedSource } from './feed-calendar.js';

export function registerFeedRoute(app: FastifyInstance, services: Services): void {
  app.get<{ Params: { file: string } }>(`${FEED_ROUTE_PREFIX}:file`, async (req, res) => {
    const token = req.params.file.replace(/\.ics$/i, '');
    const ifNoneMatch = req.headers['if-none-match'];
    const out = await serveFeed(services, token, Array.isArray(ifNoneMatch) ? ifNoneMatch.join(',') : ifNoneMatch, calendarFeedSource);
    res.header('etag', `"${out.etag}"`);
    // Calendar apps poll: they may keep the document but must ask again (a 304 is cheap).
    res.header('cache-control', 'private, no-cache');
    res.header('referrer-policy', 'no-referrer');
    res.header('x-robots-tag', 'noindex');
    if (out.status === 304) return res.code(304).send();
    return res.code(200).type('text/calendar; charset=utf-8').send(out.body);
  });
}
