/**
 * Host settings of the Connected Account providers (docs/calendar-sync.md, "Connected
 * accounts"). `provider_1`…`provider_4` are presets; `other` takes the caller's overrides.
 * A host is `host`, `host:port` or a URL: `imaps://` / `smtps://` (TLS from the start, the
 * default), `imap://` / `smtp://` (plain, upgraded with STARTTLS when the server offers it).
 */
import { errors } from '../core/errors.js';

export type Provider = 'provider_1' | 'provider_2' | 'provider_3' | 'provider_4' | 'other';

export interface Hosts {
  imap: string | null;
  smtp: string | null;
  caldav: string | null;
  carddav: string | null;
}

export const PRESETS: Record<Exclude<Provider, 'other'>, Hosts & { label: string }> = {
  provider_1: { label: 'Fastmail', imap: 'imaps://imap.fastmail.com:993', smtp: 'smtps://smtp.fastmail.com:465', caldav: 'https://caldav.fastmail.com/', carddav: 'https://carddav.fastmail.com/' },
  provider_2: { label: 'iCloud', imap: 'imaps://imap.mail.me.com:993', smtp: 'smtp://smtp.mail.me.com:587', caldav: 'https://caldav.icloud.com/', carddav: 'https://contacts.icloud.com/' },
  provider_3: { label: 'Yahoo', imap: 'imaps://imap.mail.yahoo.com:993', smtp: 'smtps://smtp.mail.yahoo.com:465', caldav: 'https://caldav.calendar.yahoo.com/', carddav: 'https://carddav.address.yahoo.com/' },
  provider_4: { label: 'mailbox.org', imap: 'imaps://imap.mailbox.org:993', smtp: 'smtps://smtp.mailbox.org:465', caldav: 'https://dav.mailbox.org/', carddav: 'https://dav.mailbox.org/' },
};

export interface HostOverrides {
  imap_host?: string | null;
  smtp_host?: string | null;
  caldav_endpoint?: string | null;
  carddav_endpoint?: string | null;
}

/** The hosts of an account: a preset's, or for `other` the overrides (refused for a preset, 400 naming the field). */
export function hostsFor(provider: Provider, o: HostOverrides): Hosts {
  if (provider !== 'other') {
    for (const k of ['imap_host', 'smtp_host', 'caldav_endpoint', 'carddav_endpoint'] as const) {
      if (o[k]) throw errors.badRequest(`body.${k}: host overrides are accepted only for provider \`other\`; ${provider} uses its preset hosts`, { field: `body.${k}`, reason: 'override_not_allowed' });
    }
    const { label: _label, ...hosts } = PRESETS[provider];
    return hosts;
  }
  return { imap: o.imap_host || null, smtp: o.smtp_host || null, caldav: o.caldav_endpoint || null, carddav: o.carddav_endpoint || null };
}

export interface MailServer {
  host: string;
  port: number;
  /** TLS from the start (else plain with STARTTLS when offered). */
  secure: boolean;
}

/** Parses a mail host setting; `kind` picks the default ports (IMAP 993/143, SMTP 465/587). */
export function parseMailHost(text: string, kind: 'imap' | 'smtp', field: string): MailServer {
  const m = /^(?:(imaps?|smtps?):\/\/)?(\[[0-9a-f:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?\/?$/i.exec(text.trim());
  if (!m) throw errors.badRequest(`${field} is not a host (host, host:port, or ${kind}s://host:port)`, { field, reason: 'invalid_host' });
  const scheme = (m[1] ?? `${kind}s`).toLowerCase();
  if (!scheme.startsWith(kind)) throw errors.badRequest(`${field}: ${scheme}:// is not a ${kind.toUpperCase()} address`, { field, reason: 'invalid_host' });
  const secure = scheme.endsWith('s');
  const port = m[3] ? Number(m[3]) : kind === 'imap' ? (secure ? 993 : 143) : secure ? 465 : 587;
  if (port < 1 || port > 65535) throw errors.badRequest(`${field}: port ${port} is out of range`, { field, reason: 'invalid_host' });
  return { host: m[2]!.replace(/^\[|\]$/g, ''), port, secure };
}
