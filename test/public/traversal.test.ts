/**
 * Nothing outside a shared folder is reachable: a corpus of spellings of "leave the folder"
 * (dot-dot forms × separators × depth × targets, raw and encoded, as test/fuzz/traversal.test.ts
 * builds them for the Home) sent as `path` and as `item` to every visitor action that locates a
 * file, against a folder link whose siblings, parent, symlinks and dot-files hold a canary.
 * Every answer must be a 4xx other than 401/403 (a 200 would be an escape, a 5xx a crash), and no
 * answer may contain the canary.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CANARY, startPublicRig, type PublicRig } from './fixture.js';

const DOTS = ['..', '%2e%2e', '%2E%2E', '.%2e', '%2e.', '%252e%252e', '%c0%ae%c0%ae', '\uff0e\uff0e', '...', '..%00', '..;', '.. ', '.\u0000.'];
const SEPS = ['/', '\\', '%2f', '%5c', '%252f', '%c0%af', '\u2215', '\uff0f', '//', '/./'];
const TARGETS = ['Other/secret.txt', 'Notes/Private.md', 'Share/.hidden.txt', 'sidecar.json', 'state/sidecar.json', 'etc/passwd'];
const PREFIXES = ['', 'sub/', '/', './', 'C:\\', '\\\\server\\share\\', 'file://', '~/', '.obsidian/', 'escape/', 'link.txt/'];
const SUFFIXES = ['', '%00', '/', '?', '#x', ' ', '::$DATA'];

function corpus(home: string): string[] {
  const out = new Set<string>();
  let i = 0;
  for (let depth = 1; depth <= 6; depth++) {
    for (const dots of DOTS) {
      for (const sep of SEPS) {
        for (const target of TARGETS) {
          const climb = (dots + sep).repeat(depth);
          out.add(PREFIXES[i % PREFIXES.length]! + climb + target.split('/').join(sep === '/./' ? '/' : sep) + SUFFIXES[i % SUFFIXES.length]!);
          i++;
        }
      }
    }
  }
  for (const f of [path.join(home, 'Other/secret.txt'), '/etc/passwd', path.join(home, '../../state/sidecar.json')]) {
    for (const s of [f, f.slice(1), `file://${f}`, 'C:' + f.replace(/\//g, '\\'), f.replace(/\//g, '%2f')]) out.add(s);
  }
  for (const s of ['escape/secret.txt', 'escape', 'link.txt', 'passwd', '.hidden.txt', '.obsidian/app.json', 'sub/../../Other/secret.txt', 'sub/../.hidden.txt', '']) out.add(s);
  return [...out];
}

let rig: PublicRig;
let slug: string;

beforeAll(async () => {
  rig = await startPublicRig();
  slug = (await rig.link({ target: { kind: 'folder', path: 'Share' }, permissions: { view: true, download: true } })).slug;
  fs.mkdirSync(path.join(rig.home, 'Share/sub'), { recursive: true });
});
afterAll(async () => {
  await rig?.inst.close();
});

describe('traversal corpus against a folder link', () => {
  it('reaches nothing outside the shared folder, through any action, as path or item', async () => {
    const variants = corpus(rig.home);
    expect(variants.length).toBeGreaterThan(4000);
    const routes = ['download', 'preview', 'entries', 'thumb'];
    const escapes: string[] = [];
    const crashes: string[] = [];
    let sent = 0;
    const one = async (route: string, param: 'path' | 'item', v: string) => {
      const value = param === 'path' ? v : `i.${Buffer.from(v, 'utf8').toString('base64url')}`;
      // Half raw (what a hostile client sends byte for byte), half percent-encoded (what a browser sends).
      const q = sent % 2 === 0 ? encodeURIComponent(value) : value.replace(/[ #&?\u0000-\u001f]/g, encodeURIComponent);
      let res: Response;
      try {
        res = await fetch(`${rig.inst.url}/api/v1/public/${slug}/${route}?${param}=${q}${route === 'thumb' ? '&s=32' : ''}`);
      } catch {
        return; // a URL fetch itself refuses never reached the server
      }
      sent++;
      const text = await res.text();
      if (text.includes(CANARY) || text.includes('root:x:0:0') || text.includes('"users"')) escapes.push(`${route} ${param}=${v} -> ${res.status}`);
      if (res.status >= 500) crashes.push(`${route} ${param}=${v} -> ${res.status} ${text.slice(0, 120)}`);
      // The empty path names the folder itself: entries lists it (200), a file action refuses it (400).
      if (res.status === 200 && !(v === '' && route === 'entries')) escapes.push(`${route} ${param}=${v} -> 200 ${text.slice(0, 80)}`);
    };
    let i = 0;
    const queue = variants.flatMap((v) => [routes[i++ % routes.length]!].flatMap((r) => [[r, 'path', v] as const, [routes[(i + 1) % routes.length]!, 'item', v] as const]));
    const workers = Array.from({ length: 8 }, async () => {
      for (let job = queue.shift(); job; job = queue.shift()) await one(job[0], job[1], job[2]);
    });
    await Promise.all(workers);
    expect(sent).toBeGreaterThan(8000);
    expect(crashes).toEqual([]);
    expect(escapes).toEqual([]);
  }, 120_000);

  it('a symlink inside the shared folder is neither listed nor followed, even one pointing inside', async () => {
    fs.symlinkSync('data.txt', path.join(rig.home, 'Share/alias.txt'));
    const e = await fetch(`${rig.inst.url}/api/v1/public/${slug}/entries`).then((r) => r.json());
    expect(e.entries.map((x: any) => x.name)).not.toContain('alias.txt');
    expect((await fetch(`${rig.inst.url}/api/v1/public/${slug}/download?path=alias.txt`)).status).toBe(404);
    expect((await fetch(`${rig.inst.url}/api/v1/public/${slug}/download?path=data.txt`)).status).toBe(200);
  });
});
