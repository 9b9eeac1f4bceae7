/**
 * Section 4.5 of the spec: the caller's background jobs (4 actions, scope account).
 * Handlers are in handlers.ts; the runner in runner.ts (docs/jobs.md).
 */
import { Type } from '@sinclair/typebox';
import { defineAction } from '../actions/types.js';
import * as h from './handlers.js';

const AREA = '4.5 Jobs';

const JobId = Type.Object(
  { id: Type.String({ format: 'uuid', description: 'UUID of the job' }) },
  { additionalProperties: false },
);

export const actions = [
  defineAction({
    name: 'cancel_my_job',
    method: 'DELETE',
    route: '/api/v1/jobs/{id}',
    tool: 'svc_api_cancel_my_job',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['account'],
    effect: 'destructive',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Cancels one of the caller\'s background jobs.',
    input: { path: JobId },
    handler: (ctx, { path }) => h.cancelMyJob(ctx, path.id),
  }),
  defineAction({
    name: 'get_my_job',
    method: 'GET',
    route: '/api/v1/jobs/{id}',
    tool: 'svc_api_get_my_job',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['account'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: 'Shows one of the caller\'s background jobs and its progress.',
    input: { path: JobId },
    handler: (ctx, { path }) => h.getMyJob(ctx, path.id),
  }),
  defineAction({
    name: 'list_my_jobs',
    method: 'GET',
    route: '/api/v1/jobs',
    tool: 'svc_api_list_my_jobs',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['account'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'json',
    recentConfirmation: false,
    area: AREA,
    summary: "Lists the caller's background jobs.",
    input: {},
    handler: (ctx) => h.listMyJobs(ctx),
  }),
  defineAction({
    name: 'my_job_events',
    method: 'GET',
    route: '/api/v1/jobs/events',
    tool: 'svc_api_my_job_events',
    surfaces: ['cli', 'mcp', 'webmcp'],
    scopes: ['account'],
    effect: 'read',
    requestEncoding: 'none',
    responseEncoding: 'sse',
    recentConfirmation: false,
    area: AREA,
    summary:
      "Streams events about the caller's jobs (server-sent events). Reduce `poll_ms` after an overflow and read current data after a reconnect; `Last-Event-ID` is used only where the route replays events.",
    input: {
      headers: Type.Object(
        {
          'last-event-id': Type.Optional(
            Type.String({ description: 'ID of the last event received; used only where the route replays events' }),
          ),
        },
        { additionalProperties: true },
      ),
    },
    handler: (ctx, { headers }) => h.myJobEvents(ctx, headers['last-event-id']),
  }),
];
