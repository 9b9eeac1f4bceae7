/**
 * Tag rewrites over HTTP: preview, small renames at once, a 1,000-file
 * rewrite as a job with progress (seen through the job actions and
 * my_job_events), a byte-exact undo that leaves a file edited since alone,
 * and reconciling the tag index with the files.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStream } from '../changes/sse-client.js';
import { runCli } from '../helpers/cli.js';
import { startInstance, type TestInstance } from '../helpers/instance.js';
import { eventually } from '../helpers/wait.js';

let inst: TestInstance;
let owner: { id: string; token: string };
let home: string;

const api = (method: string, route: string, body?: unknown, token = owner.token) => inst.api(method, route, { token, body });
const read = (rel: string) => fs.readFileSync(path.join(home, rel));

/** Varied notes: frontmatter lists in several styles, inline and nested tags, code that must not change, CRLF files. */
function noteText(i: number): string {
  const eol = i % 7 === 0 ? '\r\n' : '\n';
  const fm =
    i % 4 === 0
      ? `---${eol}title: Note ${i}${eol}tags: [proj, other]${eol}---${eol}`
      : i % 4 === 1
        ? `---${eol}tags:${eol}  - 'Proj/sub'${eol}  - keep # a comment${eol}---${eol}`
        : i % 4 === 2
          ? `---${eol}tags: proj, misc${eol}---${eol}`
          : '';
  return [
    `${fm}# Note ${i}`,
    `Some text with #proj and #PROJ/deep/x and #project (not the same tag).`,
    '```',
    '#proj inside a fence stays',
    '```',
    `Inline \`#proj\` code stays; trailing spaces stay   `,
    `Unicode ✓ ${'é'.repeat(i % 5)} #proj/ünï`,
    '',
  ].join(eol);
}

beforeAll(async () => {
  inst = await startInstance();
  owner = await inst.user('tess', 'member');
  home = path.join(inst.dataDir, 'homes', 'tess');
});
afterAll(async () => {
  await inst?.close();
});

describe('small renames', () => {
  beforeAll(async () => {
    fs.mkdirSync(path.join(home, 'Small'), { recursive: true });
    fs.writeFileSync(path.join(home, 'Small', 'a.md'), '---\ntags: [alpha]\n---\nline one\nsee #alpha/beta and `#alpha`\n');
    fs.writeFileSync(path.join(home, 'Small', 'b.md'), 'nothing here #alphabet\n#Alpha at start\n');
    // First use opens the vault and indexes these files.
    expect((await api('GET', '/api/v1/tags')).status).toBe(200);
  });

  it('preview_rename lists files, line numbers and before/after lines without changing anything', async () => {
    const before = read('Small/a.md');
    const r = await api('POST', '/api/v1/tags/rename/preview', { old_tag: '#alpha', new_tag: 'omega' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ old_tag: 'alpha', new_tag: 'omega', file_count: 2, occurrences: 3, needs_rewrite_job: false });
    const a = r.body.files.find((f: any) => f.path === 'Small/a.md');
    expect(a.changes).toEqual([
      { line: 2, before: 'tags: [alpha]', after: 'tags: [omega]' },
      { line: 5, before: 'see #alpha/beta and `#alpha`', after: 'see #omega/beta and `#alpha`' },
    ]);
    expect(r.body.files.find((f: any) => f.path === 'Small/b.md').changes).toEqual([{ line: 2, before: '#Alpha at start', after: '#omega at start' }]);
    expect(read('Small/a.md').equals(before)).toBe(true);
  });

  it('rename_tag renames at once, is undoable, and refuses bad input', async () => {
    const bad = await api('POST', '/api/v1/tags/rename', { old_tag: 'alpha', new_tag: 'has space' });
    expect(bad.status).toBe(400);
    const none = await api('POST', '/api/v1/tags/rename', { old_tag: 'nosuchtag', new_tag: 'x' });
    expect(none.status).toBe(404);
    const beforeA = read('Small/a.md');
    const r = await api('POST', '/api/v1/tags/rename', { old_tag: 'alpha', new_tag: 'omega' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ state: 'succeeded', files_changed: 2, failed: [] });
    expect(read('Small/a.md').toString()).toBe('---\ntags: [omega]\nline one\n'.replace('line one\n', '---\nline one\n') + 'see #omega/beta and `#alpha`\n');
    expect(read('Small/b.md').toString()).toBe('nothing here #alphabet\n#omega at start\n');
    const tags = (await api('GET', '/api/v1/tags')).body.items.map((t: any) => t.tag);
    expect(tags).toContain('omega');
    const undo = await api('POST', `/api/v1/tags/rewrites/${r.body.id}/undo`);
    expect(undo.body).toMatchObject({ restored: 2, skipped: [] });
    expect(read('Small/a.md').equals(beforeA)).toBe(true);
    const again = await api('POST', `/api/v1/tags/rewrites/${r.body.id}/undo`);
    expect(again.status).toBe(409);
  });

  it('merging into a tag that exists needs confirmed: true', async () => {
    fs.writeFileSync(path.join(home, 'Small', 'c.md'), '#gamma here\n');
    await eventually(async () => (await api('GET', '/api/v1/tags/gamma')).status === 200, 10_000);
    const r = await api('POST', '/api/v1/tags/rename', { old_tag: 'alpha', new_tag: 'gamma' });
    expect(r.status).toBe(409);
    expect(r.body.error.details.reason).toBe('tag_exists');
    const ok = await api('POST', '/api/v1/tags/rename', { old_tag: 'alpha', new_tag: 'gamma', confirmed: true });
    expect(ok.status).toBe(200);
    expect(read('Small/a.md').toString()).toContain('tags: [gamma]');
  });

  it('tags_reconcile re-derives tags from the files and fixes the index', async () => {
    const { vault } = await inst.server.services.vaults.forCaller({ userId: owner.id } as never);
    const index = await vault.whenReady();
    const entry = index.noteByPath('Small/b.md')!;
    // Damage the index: pretend the note has other tags.
    index.upsertNote('Small/b.md', { ...entry.facts, tags: ['wrong'], frontmatterTags: ['wrong'] }, { size: entry.size, mtimeMs: entry.mtimeMs, etag: 'stale' }, null);
    index.remove('Small/c.md');
    const r = await api('POST', '/api/v1/tags/reconcile');
    expect(r.status).toBe(200);
    expect(r.body.fixed).toEqual([{ path: 'Small/b.md', indexed: ['wrong'], on_disk: expect.arrayContaining(['gamma']) }]);
    expect(r.body.added).toEqual(['Small/c.md']);
    expect(r.body.changed).toBe(true);
    expect((await api('GET', '/api/v1/tags/items/Small/b.md')).body.tags).not.toContain('wrong');
    const again = await api('POST', '/api/v1/tags/reconcile');
    expect(again.body).toMatchObject({ fixed: [], added: [], removed: [], changed: false });
  });

  it('runs from the command line (preview_rename)', async () => {
    const r = await runCli([
      'action', 'run', 'preview_rename', '--input', JSON.stringify({ body: { old_tag: 'gamma', new_tag: 'delta' } }),
      '--json', '--server', inst.url, '--token', owner.token,
    ]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).file_count).toBeGreaterThanOrEqual(2);
  });
});

describe('a 1,000-file rewrite', () => {
  const N = 1000;
  const originals = new Map<string, Buffer>();

  beforeAll(async () => {
    // 40 folders of 25 notes (the watcher re-stats a whole folder on each change, so one huge folder is slow).
    for (let i = 0; i < N; i++) {
      const rel = `Big/f${i % 40}/${i % 3 === 0 ? 'deep/' : ''}n${i}.md`;
      fs.mkdirSync(path.dirname(path.join(home, rel)), { recursive: true });
      const bytes = Buffer.from(noteText(i), 'utf8');
      fs.writeFileSync(path.join(home, rel), bytes);
      originals.set(rel, bytes);
    }
    await eventually(async () => (await api('GET', '/api/v1/tags/proj')).body?.count === N, 30_000, 200);
  });

  it('rename_tag refuses it (409, use start_rewrite); start_rewrite runs it as a job; undo restores every byte except a file edited since', async () => {
    const refused = await api('POST', '/api/v1/tags/rename', { old_tag: 'proj', new_tag: 'work' });
    expect(refused.status).toBe(409);
    expect(refused.body.error.details).toMatchObject({ reason: 'too_many_files', hint: 'start_rewrite', files: String(N) });

    const jobsStream = openStream(`${inst.url}/api/v1/jobs/events`, owner.token, { types: ['job', 'reset'] });
    await jobsStream.opened;

    const started = await api('POST', '/api/v1/tags/rewrites', { old_tag: 'proj', new_tag: 'work' });
    expect(started.status).toBe(202);
    const { id, job_id } = started.body;
    expect(job_id).toMatch(/^[0-9a-f-]{36}$/);

    const job = await eventually(async () => {
      const j = await api('GET', `/api/v1/jobs/${job_id}`);
      return j.body.state === 'succeeded' ? j.body : null;
    }, 200_000, 200);
    expect(job).toMatchObject({ kind: 'tag_rewrite', progress: { done: N, total: N } });
    const status = await api('GET', `/api/v1/tags/rewrites/${id}`);
    expect(status.body).toMatchObject({ state: 'succeeded', files_changed: N, failed: [], progress: { done: N, total: N } });
    expect((await api('GET', '/api/v1/jobs')).body.items.some((j: any) => j.id === job_id)).toBe(true);

    // Progress reached the EventSource client, ending with the succeeded record.
    await jobsStream.waitFor((e) => e.data.id === job_id && e.data.state === 'succeeded', 10_000);
    expect(jobsStream.events.some((e) => e.data.id === job_id && e.data.state === 'running' && e.data.progress.done > 0 && e.data.progress.done < N)).toBe(true);
    jobsStream.close();

    // Only tag characters changed; code is untouched.
    const sample = read('Big/f4/n4.md').toString();
    expect(sample).toContain('tags: [work, other]');
    expect(sample).toContain('#work and #work/deep/x and #project');
    expect(sample).toContain('#proj inside a fence stays');
    expect(sample).toContain('`#proj` code stays');
    expect(read('Big/f5/n5.md').toString()).toContain(`  - 'work/sub'`);
    expect(read('Big/f0/deep/n0.md').toString()).toContain('\r\n');
    expect((await api('GET', '/api/v1/tags/proj')).status).toBe(404);

    // Someone edits one file between the rewrite and the undo.
    const edited = 'Big/f10/n10.md';
    const editedBytes = Buffer.from(read(edited).toString() + 'edited by hand\n');
    fs.writeFileSync(path.join(home, edited), editedBytes);

    const undo = await api('POST', `/api/v1/tags/rewrites/${id}/undo`);
    expect(undo.status).toBe(200);
    expect(undo.body).toMatchObject({ restored: N - 1, skipped: [{ path: edited, reason: 'edited_since' }] });
    for (const [rel, bytes] of originals) {
      if (rel === edited) continue;
      expect(read(rel).equals(bytes), rel).toBe(true);
    }
    expect(read(edited).equals(editedBytes)).toBe(true);
    expect((await api('GET', `/api/v1/tags/rewrites/${id}`)).body.state).toBe('undone');
  }, 240_000);

  it('jobs and rewrites of another user are 404; cancelling a finished job leaves it as it was', async () => {
    const other = await inst.user('uma', 'member');
    const list = (await api('GET', '/api/v1/jobs')).body.items;
    const jobId = list[0].id;
    expect((await api('GET', `/api/v1/jobs/${jobId}`, undefined, other.token)).status).toBe(404);
    expect((await api('DELETE', `/api/v1/jobs/${jobId}`, undefined, other.token)).status).toBe(404);
    const rewriteId = list[0].meta.rewrite_id;
    expect((await api('GET', `/api/v1/tags/rewrites/${rewriteId}`, undefined, other.token)).status).toBe(404);
    expect((await api('GET', '/api/v1/tags/rewrites/not-a-uuid')).status).toBe(404);
    const c = await api('DELETE', `/api/v1/jobs/${jobId}`);
    expect(c.status).toBe(200);
    expect(c.body.state).toBe('succeeded');
  });

  it('cancel_my_job stops a running rewrite; what it did can still be undone', async () => {
    const started = await api('POST', '/api/v1/tags/rewrites', { old_tag: 'proj', new_tag: 'halt' });
    expect(started.status).toBe(202);
    const c = await api('DELETE', `/api/v1/jobs/${started.body.job_id}`);
    expect(c.status).toBe(200);
    const job = await eventually(async () => {
      const j = await api('GET', `/api/v1/jobs/${started.body.job_id}`);
      return ['cancelled', 'succeeded'].includes(j.body.state) ? j.body : null;
    }, 60_000, 100);
    const status = (await api('GET', `/api/v1/tags/rewrites/${started.body.id}`)).body;
    if (job.state === 'cancelled') {
      expect(status.state).toBe('cancelled');
      expect(status.progress.done).toBeLessThan(N);
    }
    const undo = await api('POST', `/api/v1/tags/rewrites/${started.body.id}/undo`);
    expect(undo.body.restored).toBe(status.files_changed);
    for (const [rel, bytes] of originals) if (rel !== 'Big/f10/n10.md') expect(read(rel).equals(bytes), rel).toBe(true);
  }, 120_000);
});
