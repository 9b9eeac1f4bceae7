/**
 * Section 4.5 of the spec: the caller's background jobs.
 * Handlers are in handlers.ts; the runner in runner.ts (docs/jobs.md).
 */
import { Type } from '@sinclair/typebox';
import { Headers, Obj, specAction } from '../actions/spec.js';
import * as h from './handlers.js';

const JobId = Obj({ id: Type.String({ format: 'uuid', description: 'UUID of the job' }) });

export const actions = [
  specAction('cancel_my_job', {
    summary: "Cancels one of the caller's background jobs.",
    input: { path: JobId },
    handler: (ctx, { path }) => h.cancelMyJob(ctx, path.id),
  }),
  specAction('get_my_job', {
    summary: "Shows one of the caller's background jobs and its progress.",
    input: { path: JobId },
    handler: (ctx, { path }) => h.getMyJob(ctx, path.id),
  }),
  specAction('list_my_jobs', {
    summary: "Lists the caller's background jobs.",
    handler: (ctx) => h.listMyJobs(ctx),
  }),
  specAction('my_job_events', {
    summary: "Streams events about the caller's jobs (server-sent events). Reduce `poll_ms` after an overflow and read current data after a reconnect; `Last-Event-ID` is used only where the route replays events.",
    input: {
      headers: Headers({
        'last-event-id': Type.Optional(Type.String({ description: 'ID of the last event received; used only where the route replays events' })),
      }),
    },
    handler: (ctx, { headers }) => h.myJobEvents(ctx, headers['last-event-id']),
  }),
];
