/** The job runner: states, progress, cooperative cancellation, replay window, restarts. */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { INTERRUPTED, JobRunner } from '../../src/jobs/runner.js';
import { tempDir } from '../helpers/instance.js';
import { eventually } from '../helpers/wait.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('JobRunner', () => {
  it('runs a job to success with progress and keeps it to its owner', async () => {
    const r = await JobRunner.open(null);
    const job = r.start('u1', 'demo', async (j) => {
      for (let i = 1; i <= 3; i++) j.progress(i, 3);
      return { ok: true };
    });
    expect(['queued', 'running']).toContain(job.state);
    const done = await r.wait(job.id);
    expect(done).toMatchObject({ state: 'succeeded', progress: { done: 3, total: 3 }, result: { ok: true }, error: null });
    expect(r.get('u2', job.id)).toBeUndefined();
    expect(r.list('u2')).toEqual([]);
    expect(r.list('u1').map((j) => j.id)).toEqual([job.id]);
  });

  it('cancels cooperatively through the AbortSignal', async () => {
    const r = await JobRunner.open(null);
    let seen = 0;
    const job = r.start('u1', 'slow', async (j) => {
      while (!j.signal.aborted) {
        seen++;
        await new Promise((res) => setTimeout(res, 5));
      }
      return null;
    });
    await eventually(() => seen > 2);
    expect(r.cancel('u1', job.id)?.id).toBe(job.id);
    expect((await r.wait(job.id))!.state).toBe('cancelled');
    expect(r.cancel('u2', job.id)).toBeUndefined();
  });

  it('a failing job is failed with its message', async () => {
    const r = await JobRunner.open(null);
    const job = r.start('u1', 'bad', async () => {
      throw new Error('disk on fire');
    });
    expect(await r.wait(job.id)).toMatchObject({ state: 'failed', error: 'disk on fire' });
  });

  it('replays events after an id, never twice, and answers null outside the window', async () => {
    const r = await JobRunner.open(null);
    const job = r.start('u1', 'demo', async (j) => j.progress(1, 1));
    await r.wait(job.id);
    const all = r.replay('u1', `${r.epoch}.0`)!;
    expect(all.map((e) => e.job.state)).toEqual(expect.arrayContaining(['queued', 'running', 'succeeded']));
    const after = r.replay('u1', all[1]!.id)!;
    expect(after.map((e) => e.n)).toEqual(all.slice(2).map((e) => e.n));
    expect(r.replay('u1', 'otherepoch.1')).toBeNull();
    expect(r.replay('u1', undefined)).toEqual([]);
    expect(r.replay('u2', `${r.epoch}.0`)).toEqual([]);
  });

  it('a restart marks jobs the old process left unfinished as failed, not lost', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const file = path.join(dir, 'state', 'jobs.json');
    const r1 = await JobRunner.open(file);
    const job = r1.start('u1', 'forever', () => new Promise(() => undefined));
    await eventually(() => r1.get('u1', job.id)?.state === 'running');
    await eventually(() => fs.existsSync(file) && JSON.parse(fs.readFileSync(file, 'utf8')).jobs[0].state === 'running');
    // The process dies here (no close).
    const r2 = await JobRunner.open(file);
    expect(r2.get('u1', job.id)).toMatchObject({ state: 'failed', error: INTERRUPTED });
    expect(JSON.parse(fs.readFileSync(file, 'utf8')).jobs[0].state).toBe('failed');
  });

  it('close() interrupts running jobs and saves them as failed', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const file = path.join(dir, 'jobs.json');
    const r = await JobRunner.open(file);
    const job = r.start('u1', 'loop', async (j) => {
      while (!j.signal.aborted) await new Promise((res) => setTimeout(res, 5));
    });
    await eventually(() => r.get('u1', job.id)?.state === 'running');
    await r.close();
    const saved = JSON.parse(fs.readFileSync(file, 'utf8')).jobs[0];
    expect(saved).toMatchObject({ state: 'failed', error: INTERRUPTED });
  });
});
