/**
 * Section 4.6 of the spec: the change journal. Both actions need unrestricted data scope:
 * scoped credentials cannot read this journal. Handlers are in handlers.ts; the journal in
 * change-log.ts (docs/changes.md).
 */
import { Type } from '@sinclair/typebox';
import { Obj, specAction } from '../actions/spec.js';
import * as h from './handlers.js';

export const actions = [
  specAction('changes_delta', {
    summary: "Reads the caller's change journal (unrestricted data scope only): without a cursor it establishes a baseline, with one it drains at most 100 records and 64 KiB at a fixed head. Pass `cursor` unchanged while `has_more` is true; on HTTP 410 clear retained data and reload bounded visible windows.",
    input: {
      query: Obj({
        cursor: Type.Optional(Type.String({ description: 'Cursor from the previous response, unchanged; omit it to establish a baseline' })),
      }),
    },
    handler: (ctx, { query }) => h.changesDelta(ctx, query.cursor),
  }),
  specAction('changes_events', {
    summary: "Streams change hints for the caller's own sequence as server-sent events (unrestricted data scope only; one stream per User and IP). The stream does not replay, so read current snapshots after a reconnect, and reduce `poll_ms` after an overflow.",
    handler: (ctx, { headers }) => h.changesEvents(ctx, headers as Record<string, unknown>),
  }),
];
