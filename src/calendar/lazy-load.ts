import { onFirstUse } from '../core/first-use.js';

/** The calendar's domain code (./lazy.ts, ical.js under it): imported by the first call that needs it, then kept (core/first-use.ts). */
export const calendarCode = onFirstUse(() => import('./lazy.js'));
