/**
 * The calendar's domain code that start-time modules (the action definitions, the feed and
 * CalDAV routes, the sync schedule) call only from handlers: one module loaded by the first
 * such call, so that ical.js (0.2 MB) and what stands on it are not loaded by every start, and
 * the bundle gets one lazy entry for them instead of one per file (docs/performance.md, "Start-up").
 */
export * as account from './account.js';
export * as events from './events.js';
export * as feedIcal from './feed-ical.js';
export * as journalLink from './journal-link.js';
export * as subscription from './subscription.js';
export * as views from './views.js';
export * as windowCache from './window-cache.js';
