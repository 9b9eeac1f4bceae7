/**
 * Mail sign-in checks of a Connected Account: IMAP (imapflow) and SMTP (nodemailer), each
 * connecting to an address that passed the shared outbound address check (private ones only
 * with QUIRE_FETCH_ALLOW_PRIVATE=1), with a 10 s limit. A refusal is a 400 with the reason.
 */
import { refuse, resolveHost } from '../core/outbound.js';
import type { MailServer } from './providers.js';

const TIMEOUT_MS = 10_000;

async function pinned(server: MailServer, allowPrivate: boolean): Promise<string> {
  return (await resolveHost(new URL(`http://${server.host.includes(':') ? `[${server.host}]` : server.host}/`), allowPrivate)).address;
}

export async function checkImap(server: MailServer, user: string, pass: string, allowPrivate: boolean, field = 'body.imap_host'): Promise<void> {
  const address = await pinned(server, allowPrivate);
  const { ImapFlow } = await import('imapflow');
  const client = new ImapFlow({
    host: address, port: server.port, secure: server.secure, auth: { user, pass }, logger: false,
    tls: { servername: server.host }, connectionTimeout: TIMEOUT_MS, greetingTimeout: TIMEOUT_MS, socketTimeout: TIMEOUT_MS,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (e) {
    const err = e as { authenticationFailed?: boolean; responseText?: string; code?: string; message: string };
    if (err.authenticationFailed) throw refuse('imap_auth_failed', `The IMAP server ${server.host}:${server.port} refused the username and app password${err.responseText ? `: ${err.responseText}` : ''}`, { field });
    throw refuse('imap_unreachable', `Could not sign in to IMAP at ${server.host}:${server.port}: ${err.code ?? err.message}`, { field });
  }
  await client.logout().catch(() => undefined);
}

export async function checkSmtp(server: MailServer, user: string, pass: string, allowPrivate: boolean, field = 'body.smtp_host'): Promise<void> {
  const address = await pinned(server, allowPrivate);
  const nodemailer = (await import('nodemailer')).default;
  const transport = nodemailer.createTransport({
    host: address, port: server.port, secure: server.secure, auth: { user, pass }, tls: { servername: server.host },
    connectionTimeout: TIMEOUT_MS, greetingTimeout: TIMEOUT_MS, socketTimeout: TIMEOUT_MS,
  });
  try {
    await transport.verify();
  } catch (e) {
    const err = e as { code?: string; responseCode?: number; message: string };
    if (err.code === 'EAUTH') throw refuse('smtp_auth_failed', `The SMTP server ${server.host}:${server.port} refused the username and app password`, { field });
    throw refuse('smtp_unreachable', `Could not sign in to SMTP at ${server.host}:${server.port}: ${err.code ?? err.message}`, { field });
  } finally {
    transport.close();
  }
}
