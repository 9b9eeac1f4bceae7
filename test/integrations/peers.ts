/**
 * Mail peers for the Connected Account tests: Debian's Dovecot (IMAP, `dovecot -F` with its own
 * config, a passwd-file user database, plain auth, no SSL, a free loopback port) and a minimal
 * SMTP responder that accepts AUTH PLAIN for one user (Dovecot's submission service is not installed).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort, stopProcess } from '../helpers/processes.js';

export interface Peer {
  port: number;
  stop(): Promise<void>;
}

export async function startDovecot(user: string, password: string): Promise<Peer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quire-dovecot-'));
  const port = await freePort();
  const me = os.userInfo();
  // Dovecot refuses to run its login and mail processes as root: under root (CI containers) they run as nobody.
  const asRoot = me.uid === 0;
  const ids = asRoot ? { uid: 65534, gid: 65534, user: 'nobody', group: 'nogroup' } : { uid: me.uid, gid: me.gid, user: me.username, group: me.username };
  if (asRoot) fs.chmodSync(dir, 0o777);
  fs.writeFileSync(path.join(dir, 'passwd'), `${user}:{PLAIN}${password}:${ids.uid}:${ids.gid}::${dir}/home/${user}::\n`);
  fs.writeFileSync(
    path.join(dir, 'dovecot.conf'),
    `base_dir = ${dir}/run
state_dir = ${dir}/state
log_path = ${dir}/log
instance_name = quire-test-${port}
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
default_internal_user = ${ids.user}
default_internal_group = ${ids.group}
default_login_user = ${ids.user}
first_valid_uid = ${ids.uid}
mail_location = maildir:${dir}/mail/%u
passdb {
  driver = passwd-file
  args = scheme=PLAIN ${dir}/passwd
}
userdb {
  driver = passwd-file
  args = ${dir}/passwd
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = ${port}
  }
  inet_listener imaps {
    port = 0
  }
}
service anvil {
  chroot =
}
service imap-login {
  chroot =
}
`,
  );
  const child: ChildProcess = spawn('dovecot', ['-F', '-c', path.join(dir, 'dovecot.conf')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  child.stderr!.on('data', (d) => (out += String(d)));
  const deadline = Date.now() + 15_000;
  for (;;) {
    const ok = await new Promise<boolean>((r) => {
      const s = net.connect(port, '127.0.0.1', () => (s.end(), r(true)));
      s.on('error', () => r(false));
    });
    if (ok) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      const log = fs.existsSync(`${dir}/log`) ? fs.readFileSync(`${dir}/log`, 'utf8') : '';
      throw new Error(`dovecot did not start: ${out} ${log}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    port,
    stop: () => stopProcess(child, dir),
  };
}

/** Just enough SMTP (RFC 5321 greeting, EHLO with AUTH PLAIN/LOGIN, AUTH PLAIN, QUIT) for nodemailer's verify(). */
export async function startSmtp(user: string, password: string): Promise<Peer> {
  const server = net.createServer((sock) => {
    sock.write('220 test ESMTP\r\n');
    let buf = '';
    sock.on('data', (d) => {
      buf += String(d);
      let i;
      while ((i = buf.indexOf('\r\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const cmd = line.split(' ')[0]!.toUpperCase();
        if (cmd === 'EHLO') sock.write('250-test\r\n250 AUTH PLAIN LOGIN\r\n');
        else if (cmd === 'AUTH') {
          const creds = Buffer.from(line.split(' ')[2] ?? '', 'base64').toString().split('\0');
          sock.write(creds[1] === user && creds[2] === password ? '235 ok\r\n' : '535 bad credentials\r\n');
        } else if (cmd === 'QUIT') sock.end('221 bye\r\n');
        else sock.write('250 ok\r\n');
      }
    });
    sock.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as net.AddressInfo).port, stop: () => new Promise((r) => server.close(() => r())) };
}
