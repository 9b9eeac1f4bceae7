/**
 * Symlinks that lead out of the Home, and out of an App Password's
 * `home_prefix`, against every path-taking input of every built action. No
 * answer may carry what lies behind such a link, and nothing behind it may
 * change; the prefix check follows where a path really leads.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actionsBuilt, canaryText, describeFindings, startRig, type FuzzRig } from './harness.js';
import { pathSlots, slotRequest } from './inputs.js';

let rig: FuzzRig;
let privateText: string;
let outsideBefore: Map<string, string>;

/** Home paths that go through a link out of the Home (and, for the prefix token, out of `Sub/`). */
const THROUGH_LINKS = [
  'Links/out/secret.md',
  'Links/out/new.md',
  'Links/out/Notes/Deep.md',
  'Links/out/Notes',
  'Links/out',
  'Links/out.md',
  'Links/victim/Notes/Victim.md',
  'Links/victim/Notes/planted.md',
  'Links/data/canary.md',
  'Links/root/canary.md',
  'Notes/Escape.md',
  'Sub/up/Private.md',
  'Sub/up/planted.md',
  'Sub/up',
  'Sub/priv.md',
  'Sub/out/secret.md',
  'Sub/deep/up/Private.md',
];

function homeSnapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const name of fs.readdirSync(d)) {
      const p = path.join(d, name);
      const st = fs.lstatSync(p);
      if (st.isDirectory()) walk(p);
      else out.set(path.relative(dir, p), st.isSymbolicLink() ? `link ${fs.readlinkSync(p)}` : fs.readFileSync(p, 'utf8'));
    }
  };
  walk(dir);
  return out;
}

beforeAll(async () => {
  rig = await startRig({ label: 'links' });
  const h = (p: string) => path.join(rig.home, p);
  privateText = canaryText('PRIVATE');
  fs.mkdirSync(h('Notes'), { recursive: true });
  fs.writeFileSync(h('Notes/Private.md'), `---\ntitle: Private\n---\n${privateText} #private\n`);
  fs.mkdirSync(h('Links'), { recursive: true });
  fs.mkdirSync(h('Sub/deep'), { recursive: true });
  fs.writeFileSync(h('Sub/Own.md'), '# Own\n\nInside the prefix.\n');
  fs.symlinkSync(path.join(rig.root, 'outside'), h('Links/out'));
  fs.symlinkSync(path.join(rig.root, 'outside', 'secret.md'), h('Links/out.md'));
  fs.symlinkSync(path.join(rig.dataDir, 'homes', 'vic'), h('Links/victim'));
  fs.symlinkSync(rig.dataDir, h('Links/data'));
  fs.symlinkSync(rig.root, h('Links/root'));
  fs.symlinkSync(path.join(rig.root, 'outside', 'secret.md'), h('Notes/Escape.md'));
  // Inside the Home, but out of the `Sub/` prefix.
  fs.symlinkSync('../Notes', h('Sub/up'));
  fs.symlinkSync('../Notes/Private.md', h('Sub/priv.md'));
  fs.symlinkSync('../../Notes', h('Sub/deep/up'));
  fs.symlinkSync(path.join(rig.root, 'outside'), h('Sub/out'));
  outsideBefore = rig.snapshotOutside();
}, 60_000);
afterAll(async () => {
  console.log(rig.summary('symlinks'));
  for (const line of describeFindings(rig.findings)) console.log(`  ${line}`);
  await rig.close();
});

describe('home_prefix and symlinks (the reported case)', () => {
  it('an App Password limited to Sub/ neither reads nor writes Notes/ through Sub/up -> ../Notes', async () => {
    const tok = rig.tokens.prefix;
    const get = (p: string) => rig.send('files_read', { method: 'GET', target: `/api/v1/files/content?path=${encodeURIComponent(p)}`, headers: { authorization: `Bearer ${tok}` } });
    const own = await get('Sub/Own.md');
    expect(own.status).toBe(200);
    for (const p of ['Sub/up/Private.md', 'Sub/priv.md', 'Sub/deep/up/Private.md']) {
      const r = await get(p);
      expect(r.status, p).toBe(404);
      expect(r.text).not.toContain(privateText);
    }
    const put = await rig.send('files_write', {
      method: 'PUT',
      target: `/api/v1/files/content?path=${encodeURIComponent('Sub/up/planted.md')}`,
      headers: { authorization: `Bearer ${tok}`, 'content-type': 'application/json', 'if-none-match': '*' },
      body: JSON.stringify({ content: 'planted' }),
    });
    expect(put.status).toBe(403);
    expect(JSON.parse(put.text).error.details.reason).toBe('outside_home_prefix');
    expect(fs.existsSync(path.join(rig.home, 'Notes', 'planted.md'))).toBe(false);
    const list = await rig.send('files_list', { method: 'GET', target: '/api/v1/files?path=Sub', headers: { authorization: `Bearer ${tok}` } });
    expect(list.status).toBe(200);
    const names = JSON.parse(list.text).items.map((i: { path: string }) => i.path);
    expect(names).toContain('Sub/Own.md');
    expect(names).not.toContain('Sub/up');
    expect(names).not.toContain('Sub/priv.md');
    // The owner's own session still follows the in-Home link.
    const mine = await rig.send('files_read', {
      method: 'GET',
      target: `/api/v1/files/content?path=${encodeURIComponent('Sub/up/Private.md')}`,
      headers: { authorization: `Bearer ${rig.token()}` },
    });
    expect(mine.status).toBe(200);
  });

  it('search and note lists for the prefix token leave out notes reached through a link', async () => {
    const tok = rig.tokens.prefix;
    for (const target of ['/api/v1/notes/search?q=private', '/api/v1/notes?limit=100', '/api/v1/tags/private', '/api/v1/tags/items']) {
      const r = await rig.send('prefix lists', { method: 'GET', target, headers: { authorization: `Bearer ${tok}` } });
      expect(r.status, target).toBeLessThan(500);
      expect(r.text, target).not.toContain(privateText);
      expect(r.text, target).not.toContain('Sub/priv.md');
    }
  });
});

describe('every path-taking input, through links out of the Home and out of the prefix', () => {
  it('no answer shows what is behind a link, and nothing behind one changes', async () => {
    const slots = pathSlots(actionsBuilt());
    const leaks: string[] = [];
    let sent = 0;
    const pass = async (token: () => string, prefix: boolean) => {
      for (const slot of slots) {
        for (const value of THROUGH_LINKS) {
          const req = slotRequest(slot, value, token());
          const res = await rig.send(slot.action.name, req);
          sent++;
          if (res.status === 401 && !prefix) await rig.renewToken();
          if (prefix && res.text.includes(privateText)) {
            rig.record('breach', slot.action.name, req, res);
            leaks.push(`${slot.action.name} ${slot.part}.${slot.name}=${value}: ${res.status}`);
          }
        }
      }
    };
    // The prefix token first: Notes/ lies outside Sub/, so nothing there may change.
    const notesBefore = homeSnapshot(path.join(rig.home, 'Notes'));
    await pass(() => rig.tokens.prefix, true);
    expect([...homeSnapshot(path.join(rig.home, 'Notes'))]).toEqual([...notesBefore]);
    await pass(() => rig.token(), false);
    expect(sent).toBe(slots.length * THROUGH_LINKS.length * 2);
    expect(leaks).toEqual([]);
    expect(rig.writtenOutside(outsideBefore)).toEqual([]);
    const open = rig.findings.filter((f) => !f.known);
    expect(describeFindings(open)).toEqual([]);
  }, 300_000);
});
