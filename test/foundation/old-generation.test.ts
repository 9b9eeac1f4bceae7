/**
 * What a read request leaves in the old generation. A record built as a
 * spread copy that then gains a property (`{ ...link, resolved }`), or an
 * outcome given its own `body` getter, made V8 allocate old-generation
 * memory on every call: under 1,000 requests/s the old generation grew by
 * 2-9 MB a second until a full collection stopped the server for it
 * (docs/architecture.md, "Memory"). These run the code a read request runs,
 * in bursts with a young-generation collection between them (what the
 * server's idle scavenges do), and check that the old generation stays put.
 */
import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { reply, toOutcome } from '../../src/actions/reply.js';
import { v8GarbageCollector } from '../../src/memory-tuning.js';
import type { Scope } from '../../src/notes/access.js';
import { noteLinks, noteRecord } from '../../src/notes/notes.js';
import { namedWildcard } from '../../src/surfaces/http/app.js';
import { homeWith } from '../index/helpers.js';

const oldSpaceBytes = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')!.space_used_size;

/** Old-generation bytes gained over `bursts` bursts of `calls` calls, each burst followed by a scavenge. */
function oldGrowth(call: (i: number) => unknown, bursts = 6, calls = 2000): number {
  const scavenge = () => v8GarbageCollector()({ type: 'minor' });
  // Warm up: compiled code and inline caches settle, and their own allocations are done.
  for (let b = 0; b < 2; b++) {
    for (let i = 0; i < calls; i++) call(i);
    scavenge();
  }
  const before = oldSpaceBytes();
  for (let b = 0; b < bursts; b++) {
    for (let i = 0; i < calls; i++) call(i);
    scavenge();
    scavenge();
  }
  return oldSpaceBytes() - before;
}

/** Measured: under 20 KB with these builds, 2.3-56 MB with the ones they replace. */
const LIMIT = 1024 * 1024;

/** A note with 40 links (half of them to notes that exist) and 20 tasks. */
function home() {
  const lines = ['# Hub', ''];
  for (let i = 0; i < 40; i++) lines.push(`- [ ] task ${i} links [[Note ${i % 20}|label ${i}]] and [[Missing ${i}#Part]]`);
  const files: Array<[string, string]> = [['Hub.md', lines.join('\n') + '\n']];
  for (let i = 0; i < 20; i++) files.push([`Note ${i}.md`, `# Note ${i}\n#topic\n`]);
  return homeWith(files);
}

describe('a read request leaves nothing in the old generation', () => {
  const index = home();
  const scope = { index, prefix: null, quotaBytes: 0 } as unknown as Scope;
  const hubId = index.noteByPath('Hub.md')!.id;

  it('links of a note', () => {
    expect(noteLinks(scope, hubId).items).toHaveLength(80);
    expect(oldGrowth(() => JSON.stringify(noteLinks(scope, hubId)))).toBeLessThan(LIMIT);
  });

  it('tasks of the Home', () => {
    expect([...index.tasks()]).toHaveLength(40);
    expect(oldGrowth(() => JSON.stringify([...index.tasks()]))).toBeLessThan(LIMIT);
  });

  it('an outcome with an ETag, and its body read', () => {
    const entry = index.noteByPath('Note 3.md')!;
    const out = toOutcome(reply(noteRecord(entry), { etag: entry.etag }));
    expect(out).toMatchObject({ status: 200, etag: entry.etag, body: { path: 'Note 3.md' } });
    expect(oldGrowth(() => toOutcome(reply(noteRecord(entry), { etag: entry.etag })).body)).toBeLessThan(LIMIT);
  });

  it('route params with a wildcard named', () => {
    const params = { id: 'n1', '*': 'area/health' };
    expect(namedWildcard(params, 'tag')).toEqual({ id: 'n1', tag: 'area/health' });
    expect(oldGrowth(() => namedWildcard(params, 'tag'))).toBeLessThan(LIMIT);
  });
});
