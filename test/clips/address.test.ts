/** The clip address check, as a pure function: no traffic goes to any of these. */
import { describe, expect, it } from 'vitest';
import { isPublicAddress, parseV6 } from '../../src/clips/address.js';

describe('isPublicAddress', () => {
  const refused = [
    '10.0.0.1',
    '10.255.255.255',
    '172.16.0.1',
    '172.31.255.254',
    '192.168.1.10',
    '127.0.0.1',
    '127.8.9.10',
    '169.254.169.254',
    '0.0.0.0',
    '100.64.0.1',
    '224.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    'fc00::1',
    'fd12:3456:789a::1',
    'fe80::1',
    'fe80::1%eth0',
    'febf::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.1.2.3',
    '::ffff:169.254.169.254',
    '::127.0.0.1',
    '64:ff9b::a00:1',
    '2002:c0a8:0101::1',
    'ff02::1',
    '2001:db8::1',
    'not-an-ip',
    '',
  ];
  const allowed = [
    '93.184.216.34',
    '8.8.8.8',
    '1.1.1.1',
    '172.15.255.255',
    '172.32.0.1',
    '192.169.0.1',
    '169.255.0.1',
    '11.0.0.1',
    '2606:2800:220:1:248:1893:25c8:1946',
    '2a00:1450:4001:80b::200e',
    '::ffff:93.184.216.34',
    '64:ff9b::808:808',
  ];
  it.each(refused)('refuses %s', (ip) => expect(isPublicAddress(ip)).toBe(false));
  it.each(allowed)('allows %s', (ip) => expect(isPublicAddress(ip)).toBe(true));

  it('parses IPv6 forms to eight groups', () => {
    expect(parseV6('::1')).toEqual([0, 0, 0, 0, 0, 0, 0, 1]);
    expect(parseV6('::ffff:127.0.0.1')).toEqual([0, 0, 0, 0, 0, 0xffff, 0x7f00, 1]);
    expect(parseV6('1:2:3:4:5:6:7:8')).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(parseV6('1::2::3')).toBeNull();
  });
});
