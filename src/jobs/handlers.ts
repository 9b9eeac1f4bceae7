/** Handlers of the jobs area: the caller's own jobs only (another user's job is 404). */
import { callerOf, type ActionContext } from '../actions/context.js';
import { AppError, errors } from '../core/errors.js';
import { sse, type SseStream } from '../surfaces/http/sse.js';
import type { JobEvent, JobRunner } from './runner.js';

export function jobsOf(ctx: ActionContext): JobRunner {
  const j = ctx.services.jobs;
  if (!j) throw new AppError('service_unavailable', 'Background jobs are not running on this server');
  return j;
}

const notFound = (id: string) => errors.notFound(`No job ${id}`, { id });

export function listMyJobs(ctx: ActionContext) {
  return { items: jobsOf(ctx).list(callerOf(ctx).userId), next_cursor: null };
}

export function getMyJob(ctx: ActionContext, id: string) {
  const job = jobsOf(ctx).get(callerOf(ctx).userId, id);
  if (!job) throw notFound(id);
  return job;
}

export function cancelMyJob(ctx: ActionContext, id: string) {
  const job = jobsOf(ctx).cancel(callerOf(ctx).userId, id);
  if (!job) throw notFound(id);
  return job;
}

const toSse = (e: JobEvent) => ({ id: e.id, event: 'job', data: e.job });

/**
 * `my_job_events`: one `job` event (the job record) per state or progress
 * change of the caller's jobs, with id `<epoch>.<n>`. Replays after
 * `Last-Event-ID` within the window; outside it, one `reset` event.
 */
export function myJobEvents(ctx: ActionContext, lastEventId: string | undefined): SseStream {
  const owner = callerOf(ctx).userId;
  const jobs = jobsOf(ctx);
  return sse({
    snapshot: () => {
      const events = jobs.replay(owner, lastEventId);
      return {
        reset: events === null,
        last_event_id: jobs.lastEventId(),
        events: (events ?? []).map(toSse),
        jobs: jobs.list(owner),
      };
    },
    open: (sink) => {
      const replay = jobs.replay(owner, lastEventId);
      let sent = 0;
      if (replay === null) {
        sink.send({ id: jobs.lastEventId(), event: 'reset', data: { reason: 'replay_window_exceeded', hint: 'read current jobs again' } });
      } else {
        for (const e of replay) {
          sink.send(toSse(e));
          sent = e.n;
        }
      }
      const off = jobs.onEvent(owner, (e) => {
        if (e.n <= sent) return;
        sent = e.n;
        sink.send(toSse(e));
      });
      sink.onClose(off);
    },
  });
}
