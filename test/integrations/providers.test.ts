/** Connected Account host rules, table by table. */
import { describe, expect, it } from 'vitest';
import { hostsFor, parseMailHost, PRESETS } from '../../src/integrations/providers.js';

describe('parseMailHost', () => {
  it.each([
    ['imap.example.com', 'imap', { host: 'imap.example.com', port: 993, secure: true }],
    ['imap.example.com:1143', 'imap', { host: 'imap.example.com', port: 1143, secure: true }],
    ['imap://127.0.0.1:2143', 'imap', { host: '127.0.0.1', port: 2143, secure: false }],
    ['imap://mail.test', 'imap', { host: 'mail.test', port: 143, secure: false }],
    ['smtp.example.com', 'smtp', { host: 'smtp.example.com', port: 465, secure: true }],
    ['smtp://smtp.example.com', 'smtp', { host: 'smtp.example.com', port: 587, secure: false }],
    ['[::1]:25', 'smtp', { host: '::1', port: 25, secure: true }],
  ] as const)('%s (%s)', (text, kind, want) => expect(parseMailHost(text, kind, 'f')).toEqual(want));

  it.each([['smtp://x', 'imap'], ['host name', 'imap'], ['x:99999', 'smtp'], ['http://x', 'smtp']] as const)('refuses %s for %s', (text, kind) => {
    expect(() => parseMailHost(text, kind, 'body.imap_host')).toThrow(expect.objectContaining({ status: 400 }));
  });
});

describe('hostsFor', () => {
  it('gives a preset its hosts and refuses overrides on it', () => {
    expect(hostsFor('provider_1', {})).toMatchObject({ imap: PRESETS.provider_1.imap, caldav: PRESETS.provider_1.caldav });
    expect(() => hostsFor('provider_2', { imap_host: 'x' })).toThrow(expect.objectContaining({ details: expect.objectContaining({ reason: 'override_not_allowed', field: 'body.imap_host' }) }));
  });
  it('takes the overrides for other', () => {
    expect(hostsFor('other', { imap_host: 'i', smtp_host: null, caldav_endpoint: 'https://c/' })).toEqual({ imap: 'i', smtp: null, caldav: 'https://c/', carddav: null });
  });
});
