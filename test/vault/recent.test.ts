/** Which observed states are the echo of the server's own change (RecentWrites), table-style. */
import { describe, expect, it } from 'vitest';
import { RecentWrites, type FileSig, type ObservedState } from '../../src/vault/recent.js';

const A: FileSig = { ino: 11, size: 5, mtimeMs: 1000.5 };
const A_AGAIN: FileSig = { ino: 12, size: 5, mtimeMs: 2000.25 }; // same bytes, written back as a new file
const B: FileSig = { ino: 13, size: 7, mtimeMs: 3000 };

const file = (sig: FileSig, etag = 'etag-a'): ObservedState => ({ exists: true, sig, readEtag: async () => etag });
const gone: ObservedState = { exists: false };

type Step = (r: RecentWrites) => void;
const cases: Array<[string, Step[], ObservedState, boolean]> = [
  ['the file the server wrote', [(r) => r.noteWrite('n.md', 'etag-a', A)], file(A), true],
  ['the same bytes in a new file (deleted and written back, git checkout)', [(r) => r.noteWrite('n.md', 'etag-a', A)], file(A_AGAIN), false],
  ['another file', [(r) => r.noteWrite('n.md', 'etag-a', A)], file(B, 'etag-b'), false],
  ['absent after a write', [(r) => r.noteWrite('n.md', 'etag-a', A)], gone, false],
  ['a write under way (noted before the rename): its bytes', [(r) => r.noteWrite('n.md', 'etag-a')], file(A_AGAIN), true],
  ['a write under way: other bytes', [(r) => r.noteWrite('n.md', 'etag-a')], file(B, 'etag-b'), false],
  ['the write completed with its signature', [(r) => r.noteWrite('n.md', 'etag-a'), (r) => r.noteWrite('n.md', 'etag-a', A)], file(A_AGAIN), false],
  ['absent after the server deleted it', [(r) => r.noteWrite('n.md', 'etag-a', A), (r) => r.noteDelete('n.md')], gone, true],
  ['back after the server deleted it', [(r) => r.noteWrite('n.md', 'etag-a', A), (r) => r.noteDelete('n.md')], file(A), false],
  ['an older write of the path (only the latest counts)', [(r) => r.noteWrite('n.md', 'etag-a', A), (r) => r.noteWrite('n.md', 'etag-b', B)], file(A), false],
  ['the file the server moved here', [(r) => r.noteMoved('n.md', A)], file(A), true],
  ['the server wrote it, then another program changed it (forget), then the very file came back', [(r) => r.noteWrite('n.md', 'etag-a', A), (r) => r.forget('n.md')], file(A), false],
  ['absent after the server deleted it, then another program made and removed it (forget)', [(r) => r.noteDelete('n.md'), (r) => r.forget('n.md')], gone, false],
  ['nothing recorded', [], file(A), false],
];

describe('RecentWrites.isOwn', () => {
  it.each(cases)('%s', async (_name, steps, observed, own) => {
    const r = new RecentWrites();
    for (const s of steps) s(r);
    expect(await r.isOwn('n.md', observed)).toBe(own);
  });

  it('forgets entries after the TTL', async () => {
    let now = 0;
    const r = new RecentWrites(30_000, () => now);
    r.noteWrite('n.md', 'etag-a', A);
    now = 30_001;
    expect(await r.isOwn('n.md', file(A))).toBe(false);
  });
});
