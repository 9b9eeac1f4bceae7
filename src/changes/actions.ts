/**
 * Section 4.6 of the spec: the change journal (2 actions, scopes account and data).
 * Both need unrestricted data scope: scoped credentials cannot read this journal.
 * Handlers are in handlers.ts; the journal in journal.ts (docs/changes.md).
 */
import { Type } from '@sinclair/typebox';
import { defineAction } from '../actions/types.js';
import * as h from './handlers.js';

const AREA = '4.6 Changes';

export const actions = [
  defineAction({
    name: 'changes_delta',
    method: 'GET',
    route: '/api/v1/changes',
    tool: 'svc_api_changes_delta',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['account', 'data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary:
      "Reads the caller's change journal (unrestricted data scope only): without a cursor it establishes a baseline, with one it drains at most 100 records and 64 KiB at a fixed head. Pass `cursor` unchanged while `has_more` is true; on HTTP 410 clear retained data and reload bounded visible windows.",
    input: {
      query: Type.Object(
        {
          cursor: Type.Optional(
            Type.String({ description: 'Cursor from the previous response, unchanged; omit it to establish a baseline' }),
          ),
        },
        { additionalProperties: false },
      ),
    },
    handler: (ctx, { query }) => h.changesDelta(ctx, query.cursor),
  }),
  defineAction({
    name: 'changes_events',
    method: 'GET',
    route: '/api/v1/changes/events',
    tool: 'svc_api_changes_events',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['account', 'data'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'sse',
    recentConfirmation: false,
    area: AREA,
    summary:
      "Streams change hints for the caller's own sequence as server-sent events (unrestricted data scope only; one stream per User and IP). The stream does not replay, so read current snapshots after a reconnect, and reduce `poll_ms` after an overflow.",
    input: {},
    handler: (ctx, { headers }) => h.changesEvents(ctx, headers as Record<string, unknown>),
  }),
];
