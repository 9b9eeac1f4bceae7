/**
 * App Password setup profiles: a one-time download link (token in the path,
 * 10 minutes) for an Apple configuration profile (.mobileconfig) whose CalDAV
 * payload holds the App Password. The profile is encrypted at rest with
 * AES-256-GCM under a key derived (HKDF-SHA-256) from the download token,
 * which the store keeps only hashed: the sidecar file alone cannot reveal the
 * secret. A download deletes the ciphertext.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes, randomUUID } from 'node:crypto';
import { callerOf, type ActionContext } from '../actions/context.js';
import { reply } from '../actions/reply.js';
import { publicBaseUrl } from '../core/config.js';
import { errors } from '../core/errors.js';
import { hashSecret, newId, newSecret, sameSecret } from '../core/ids.js';
import type { ProfileLinkRecord } from '../store/schema.js';
import { findAppPassword } from '../store/sessions.js';
import { insertProfileLink, takeProfileLink } from '../store/sign-in.js';

export const PROFILE_LINK_TTL_MS = 10 * 60 * 1000;
const FORMAT = 'apple-mobileconfig';
const CONTENT_TYPE = 'application/x-apple-aspen-config';

const keyFrom = (token: string, id: string) => Buffer.from(hkdfSync('sha256', token, id, 'quire app-password profile', 32));

const xml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);

export function mobileconfig(opts: { base: string; username: string; password: string; label: string; instance: string }): string {
  const u = new URL(opts.base);
  const ssl = u.protocol === 'https:';
  const port = u.port ? Number(u.port) : ssl ? 443 : 80;
  const payloadId = randomUUID().toUpperCase();
  const profileId = randomUUID().toUpperCase();
  return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>PayloadContent</key>
  <array>
    <dict>
      <key>CalDAVAccountDescription</key><string>${xml(opts.label)}</string>
      <key>CalDAVHostName</key><string>${xml(u.hostname)}</string>
      <key>CalDAVPort</key><integer>${port}</integer>
      <key>CalDAVPrincipalURL</key><string>${xml(`${opts.base}/dav/principals/${encodeURIComponent(opts.username)}/`)}</string>
      <key>CalDAVUseSSL</key><${ssl ? 'true' : 'false'}/>
      <key>CalDAVUsername</key><string>${xml(opts.username)}</string>
      <key>CalDAVPassword</key><string>${xml(opts.password)}</string>
      <key>PayloadDescription</key><string>Calendars of ${xml(opts.username)} on ${xml(opts.instance)}</string>
      <key>PayloadDisplayName</key><string>${xml(opts.label)}</string>
      <key>PayloadIdentifier</key><string>org.quire.caldav.${payloadId}</string>
      <key>PayloadType</key><string>com.apple.caldav.account</string>
      <key>PayloadUUID</key><string>${payloadId}</string>
      <key>PayloadVersion</key><integer>1</integer>
    </dict>
  </array>
  <key>PayloadDisplayName</key><string>${xml(opts.instance)} calendars</string>
  <key>PayloadIdentifier</key><string>org.quire.profile.${profileId}</string>
  <key>PayloadRemovalDisallowed</key><false/>
  <key>PayloadType</key><string>Configuration</string>
  <key>PayloadUUID</key><string>${profileId}</string>
  <key>PayloadVersion</key><integer>1</integer>
</dict>
</plist>
`;
}

export async function createProfiles(ctx: ActionContext, appPasswordId: string, password: string) {
  const caller = callerOf(ctx);
  const ap = findAppPassword(ctx.services.store, caller.userId, appPasswordId);
  if (!ap) throw errors.notFound(`No App Password ${appPasswordId} of yours`, { id: appPasswordId });
  if (!sameSecret(hashSecret(password), ap.token_hash)) {
    throw errors.badRequest('password is not the secret of this App Password', { field: 'body.password' });
  }
  const config = ctx.services.config;
  const base = publicBaseUrl(config);
  const now = ctx.now();
  const token = newSecret('qp');
  const id = newId();
  const body = mobileconfig({ base, username: caller.username, password, label: `${config.instanceName} (${ap.name})`, instance: config.instanceName });
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyFrom(token, id), iv);
  const ciphertext = Buffer.concat([cipher.update(body, 'utf8'), cipher.final()]);
  const record: ProfileLinkRecord = {
    id,
    user_id: caller.userId,
    app_password_id: ap.id,
    token_hash: hashSecret(token),
    format: FORMAT,
    iv: iv.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
    ciphertext: ciphertext.toString('base64'),
    created_at: now,
    expires_at: now + PROFILE_LINK_TTL_MS,
    downloaded_at: null,
  };
  await insertProfileLink(ctx.services.store, record, now);
  const url = `${base}/api/v1/auth/app-password-profiles/${token}`;
  return reply({ items: [{ id, format: FORMAT, content_type: CONTENT_TYPE, url, token, expires_at: record.expires_at }], next_cursor: null }, { status: 201 });
}

export async function downloadProfile(ctx: ActionContext, token: string) {
  const now = ctx.now();
  const hash = hashSecret(token);
  const rec = await takeProfileLink(ctx.services.store, hash);
  if (!rec || rec.expires_at <= now || rec.downloaded_at !== null) {
    throw errors.notFound('This download link is unknown, used or expired; create a new one', { reason: 'profile_link_invalid' });
  }
  const decipher = createDecipheriv('aes-256-gcm', keyFrom(token, rec.id), Buffer.from(rec.iv, 'base64'));
  decipher.setAuthTag(Buffer.from(rec.tag, 'base64'));
  const bytes = Buffer.concat([decipher.update(Buffer.from(rec.ciphertext, 'base64')), decipher.final()]);
  return reply(bytes, {
    contentType: CONTENT_TYPE,
    headers: { 'content-disposition': 'attachment; filename="quire-calendars.mobileconfig"', 'cache-control': 'no-store' },
  });
}
