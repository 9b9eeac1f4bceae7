/**
 * What the server's start loads while its Homes open (src/server.ts): the registry, the app
 * and the routes and hooks added beside the actions, as ONE module. The command-line bundle
 * makes a chunk for each set of entries that share a module; eight dynamic imports of these
 * gave 57 chunks and 288 import edges at start (each resolved, linked and read), one import
 * 32 and 105 when it was made (docs/performance.md, "Start-up", "The server's own start").
 */
export { registry } from '../../actions/registry.js';
export { buildApp } from './app.js';
export { registerWeb } from '../../web/pages.js';
export { registerFeedRoute } from '../../calendar/feed-route.js';
export { registerFileDrop } from '../../public/tus-http.js';
export { registerCalDav } from '../../caldav/routes.js';
export { attachCollab } from '../../collab/hub.js';
export { CalendarSyncSchedule } from '../../calendar/sync-schedule.js';
