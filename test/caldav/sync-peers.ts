/** Real peers for the CalDAV sync tests and benchmark: Debian's Radicale on a free loopback port, with its own config, htpasswd file and storage in a temp folder. */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ics } from '../helpers/ics.js';
import { freePort, stopProcess } from '../helpers/processes.js';

export interface Radicale {
  url: string;
  user: string;
  password: string;
  dir: string;
  /** A DAV request as the user (Basic), for setting up and checking the server's side. */
  dav(method: string, pathOrUrl: string, body?: string, headers?: Record<string, string>): Promise<Response>;
  stop(): Promise<void>;
}

export async function startRadicale(user = 'alice', password = 'secret-pw'): Promise<Radicale> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quire-radicale-'));
  const port = await freePort();
  fs.writeFileSync(path.join(dir, 'users'), `${user}:${password}\n`);
  fs.writeFileSync(
    path.join(dir, 'config'),
    [
      '[server]', `hosts = 127.0.0.1:${port}`,
      '[auth]', 'type = htpasswd', `htpasswd_filename = ${path.join(dir, 'users')}`, 'htpasswd_encryption = plain', 'delay = 0',
      '[storage]', `filesystem_folder = ${path.join(dir, 'collections')}`,
      '[rights]', 'type = owner_only',
      '[logging]', 'level = warning', 'mask_passwords = True',
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn('radicale', ['--config', path.join(dir, 'config')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += String(d)));
  const url = `http://127.0.0.1:${port}`;
  const auth = 'Basic ' + Buffer.from(`${user}:${password}`).toString('base64');
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      await fetch(url + '/');
      break;
    } catch {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`radicale did not start: ${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    url, user, password, dir,
    dav: (method, p, body, headers = {}) =>
      fetch(p.startsWith('http') ? p : url + p, { method, body, headers: { authorization: auth, ...(body ? { 'content-type': 'text/calendar; charset=utf-8' } : {}), ...headers } }),
    stop: () => stopProcess(child, dir),
  };
}

export function mkcalendar(name: string): string {
  return `<?xml version="1.0" encoding="utf-8"?><C:mkcalendar xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:set><D:prop><D:displayname>${name}</D:displayname></D:prop></D:set></C:mkcalendar>`;
}

export function vevent(uid: string, summary: string, day = '20260310'): string {
  return ics(uid, [`DTSTART:${day}T090000Z`, `DTEND:${day}T100000Z`, `SUMMARY:${summary}`]);
}
