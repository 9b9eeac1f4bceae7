/**
 * A warm start takes where each link resolves from the snapshot (it does not
 * resolve the Home's links again). Whatever changed in the folder while no
 * server had it open, a warm start must answer backlinks, outgoing links,
 * unresolved links and tags exactly as a cold start of the same folder.
 * A snapshot this build cannot read is rebuilt from the files.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { INDEX_SNAPSHOT_VERSION } from '../../src/index/home-index.js';
import { snapshotTail, splitSnapshot } from '../../src/index/snapshot.js';
import { Vault } from '../../src/vault/vault.js';
import { linkState } from '../index/helpers.js';
import { tmpDir } from './helpers.js';

async function answers(root: string, cacheFile: string | null) {
  const v = new Vault({ root, cacheFile, watch: false, scanThreads: 1 });
  const stats = await v.ready;
  const pendingAtReady = v.index.pendingWork().notes;
  const state = linkState(v.index);
  const tagged = Object.fromEntries(state.tags.map((t) => [t.tag, v.index.notesWithTag(t.tag).map((n) => n.path)]));
  // Read last: a warm start decodes these facts only now (snapshot.ts, a note line's rest), after the changes.
  const notes = [...v.index.notes()]
    .map((n) => ({ path: n.path, id: n.id, title: n.title, frontmatter: n.frontmatter, created: n.created, wordCount: n.wordCount, headings: n.headings, facts: { ...n.facts, links: n.facts.links.toArray() } }))
    .sort((a, b) => (a.path < b.path ? -1 : 1));
  const tasks = [...v.index.tasks()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.line - b.line));
  const anchors = { task: v.index.taskByBlockId('t1'), owner: v.index.blockOwner('b1') };
  // The full text holds a document for each note, at its etag: none left of a note gone while closed.
  const searched = [...v.index.fullText.indexed()].sort();
  await v.index.whenIdle();
  await v.close();
  return { stats, pendingAtReady, state: { ...state, tagged, notes, tasks, anchors, searched } };
}

const write = (root: string, rel: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  fs.writeFileSync(path.join(root, rel), text);
};

describe('warm start: stored link resolutions', () => {
  it('answers like a cold start after each kind of change made while closed', async () => {
    const root = await tmpDir();
    const cacheFile = path.join(await tmpDir('quire-cache-'), 'index.ndjson');
    write(root, 'Home.md', '---\naliases: [Start]\n---\n# Home\n[[Project Alpha]] [[Reading List]] [[Inbox]] ![[café.png]] #hub\n');
    write(root, 'Projects/Project Alpha.md', 'alpha [[Start]] [[Home]] [[Ideas/Inbox]] [x](../Home.md) #hub/alpha\n');
    write(root, 'Ideas/Inbox.md', 'inbox [[Project Alpha#Goals]] [[Nowhere]] [[Later]] #idea\n');
    write(root, 'deep/a/Inbox.md', 'a second Inbox [[Start|the start]]\n');
    write(root, 'Later.md', 'later [[Home]]\n');
    write(root, 'café.png', 'png');
    for (let i = 0; i < 20; i++) write(root, `gen/n${i}.md`, `note ${i} [[n${(i + 1) % 20}]] [[Home]] #gen/${i % 3}\n`);
    write(root, 'Tasks.md', '---\nid: tasks\ncreated: 2024-01-02\ntags: [plan]\n---\n# Tasks\n- [ ] one ^t1\n- [x] two\npara ^b1\n');

    const first = await answers(root, cacheFile);
    expect(first.stats.parsed).toBe(26);
    // The save after a settled index holds every link's resolution.
    const parts = splitSnapshot(fs.readFileSync(cacheFile));
    expect(parts.resolutions).not.toBeNull();
    expect(parts.resolutions!.length * 5).toBe(parts.nums.length);

    const steps: Array<[string, () => void]> = [
      ['nothing changed', () => {}],
      ['a new note makes an unresolved link resolve', () => write(root, 'Reading List.md', 'list #new\n')],
      ['a new note with a shorter path takes a name other links resolve to', () => write(root, 'Inbox.md', 'top inbox\n')],
      ['a linked note is deleted', () => fs.rmSync(path.join(root, 'Ideas/Inbox.md'))],
      ['a note is renamed', () => fs.renameSync(path.join(root, 'Later.md'), path.join(root, 'deep/Later renamed.md'))],
      ['an alias moves to another note', () => {
        write(root, 'Home.md', '# Home\n[[Project Alpha]] [[Reading List]] #hub\n');
        write(root, 'gen/n3.md', '---\naliases: [start, Nowhere]\n---\nnote 3 [[Home]]\n');
      }],
      ['a note is retitled by its heading and tags change', () => write(root, 'gen/n5.md', '# Something else\n[[Later renamed]] #other/tag\n')],
      ['a linked file is deleted', () => fs.rmSync(path.join(root, 'café.png'))],
      ['a note with tasks, a block and frontmatter is edited', () => write(root, 'Tasks.md', '---\nid: tasks2\ndate: 2023-05-06\n---\n# Plans\n- [ ] one ^b1\n- [-] three ^t1\n')],
      ['a note with tasks and a block is renamed', () => fs.renameSync(path.join(root, 'Tasks.md'), path.join(root, 'deep/Tasks moved.md'))],
    ];
    for (const [name, change] of steps) {
      change();
      const warm = await answers(root, cacheFile);
      const cold = await answers(root, null);
      expect(warm.state, name).toEqual(cold.state);
      if (name === 'nothing changed') {
        // Taken from the snapshot: no note read, no link left to resolve when the Home is ready.
        expect(warm.stats.parsed).toBe(0);
        expect(warm.pendingAtReady).toBe(0);
      }
    }
  });

  it('a Vault closed right after opening still saves its links resolved, and so does a warm open of a snapshot without them', async () => {
    const root = await tmpDir();
    const cacheFile = path.join(await tmpDir('quire-cache-'), 'index.ndjson');
    for (let i = 0; i < 50; i++) write(root, `n${i}.md`, `[[n${(i + 1) % 50}]] [[missing ${i}]] #t/${i % 4}\n`);
    const v = new Vault({ root, cacheFile, watch: false, scanThreads: 1 });
    await v.ready;
    await v.close();
    expect(splitSnapshot(fs.readFileSync(cacheFile)).resolutions).not.toBeNull();

    // A snapshot written without them (as an older build or a save during a burst of writes left it).
    const parts = splitSnapshot(fs.readFileSync(cacheFile));
    fs.writeFileSync(cacheFile, Buffer.concat([parts.bytes, snapshotTail(parts.bytes.length, { ...parts, resolutions: null })]));
    const again = new Vault({ root, cacheFile, watch: false, scanThreads: 1 });
    await again.ready;
    await again.close();
    expect(splitSnapshot(fs.readFileSync(cacheFile)).resolutions).not.toBeNull();
  });

  it('drops the full text of a note deleted while closed when only the full-text file could be read', async () => {
    const root = await tmpDir();
    const cacheFile = path.join(await tmpDir('quire-cache-'), 'index.ndjson');
    write(root, 'a.md', 'alpha zebrafish\n');
    write(root, 'b.md', 'beta\n');
    await answers(root, cacheFile);
    fs.rmSync(path.join(root, 'a.md'));
    fs.writeFileSync(cacheFile, 'not a snapshot');
    const warm = await answers(root, cacheFile);
    expect(warm.state.searched).toEqual((await answers(root, null)).state.searched);
    expect(warm.state.searched.map(([p]) => p)).toEqual(['b.md']);
  });

  it.each([
    ['a snapshot of the previous format', '{"format":"quire-home-index","version":4}\n["f","café.png",[3,1,"",1,1]]\n'],
    ['a file that is not a snapshot', 'not a snapshot\u0000\u0001'],
    ['an empty file', ''],
  ])('rebuilds the index from the files over %s, and saves a readable one', async (_name, content) => {
    const root = await tmpDir();
    const cacheFile = path.join(await tmpDir('quire-cache-'), 'index.ndjson');
    write(root, 'a.md', '[[b]] #t\n');
    write(root, 'b.md', 'b\n');
    fs.writeFileSync(cacheFile, content);
    const warm = await answers(root, cacheFile);
    expect(warm.stats.parsed).toBe(2);
    expect(warm.state).toEqual((await answers(root, null)).state);
    expect(warm.state.backlinks['b.md']!.map((b) => b.from)).toEqual(['a.md']);
    const header = JSON.parse(fs.readFileSync(cacheFile, 'utf8').split('\n')[0]!) as { version: number };
    expect(header.version).toBe(INDEX_SNAPSHOT_VERSION);
    expect((await answers(root, cacheFile)).stats.parsed).toBe(0);
  });
});
