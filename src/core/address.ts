/**
 * Which IP addresses an outbound fetch (clips, subscriptions, CalDAV accounts,
 * push) may connect to. Pure functions, no network: outbound.ts resolves a host
 * and refuses it unless every address passes `isPublicAddress` (or the
 * operator set QUIRE_FETCH_ALLOW_PRIVATE=1).
 */
import net from 'node:net';

/** IPv4 blocks that are not the public internet: [first octets as a 32-bit number, prefix length]. */
const V4_BLOCKED: Array<[string, number]> = [
  ['0.0.0.0', 8], // "this network", includes the unspecified address
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata services live here)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, includes broadcast
];

function v4ToInt(ip: string): number {
  return ip.split('.').reduce((acc, part) => (acc * 256 + Number(part)) >>> 0, 0);
}

function v4Allowed(ip: string): boolean {
  const n = v4ToInt(ip);
  for (const [base, prefix] of V4_BLOCKED) {
    const mask = prefix === 0 ? 0 : (~0 << (32 - prefix)) >>> 0;
    if (((n & mask) >>> 0) === ((v4ToInt(base) & mask) >>> 0)) return false;
  }
  return true;
}

/** The eight 16-bit groups of an IPv6 address (zone ID dropped, embedded dotted IPv4 expanded). */
export function parseV6(ip: string): number[] | null {
  let s = ip.replace(/^\[|\]$/g, '').replace(/%.*$/, '').toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (dotted) {
    if (net.isIPv4(dotted[1]!) === false) return null;
    const n = v4ToInt(dotted[1]!);
    s = s.slice(0, dotted.index) + `${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail];
  const out: number[] = [];
  for (const g of groups) {
    if (!/^[0-9a-f]{1,4}$/.test(g)) return null;
    out.push(parseInt(g, 16));
  }
  return out.length === 8 ? out : null;
}

const v4From = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

function v6Allowed(ip: string): boolean {
  const g = parseV6(ip);
  if (!g) return false;
  const zeroUpTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  // ::ffff:a.b.c.d (IPv4-mapped) and ::a.b.c.d (IPv4-compatible, deprecated): judge the IPv4 address.
  if (zeroUpTo(5) && g[5] === 0xffff) return v4Allowed(v4From(g[6]!, g[7]!));
  if (zeroUpTo(6)) return g[6] !== 0 || g[7]! > 1 ? v4Allowed(v4From(g[6]!, g[7]!)) : false; // :: and ::1
  // 64:ff9b::/96 (NAT64) carries an IPv4 address in its last 32 bits.
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return v4Allowed(v4From(g[6]!, g[7]!));
  // 2002::/16 (6to4) carries one in bits 16-47.
  if (g[0] === 0x2002) return v4Allowed(v4From(g[1]!, g[2]!));
  const first = g[0]!;
  if ((first & 0xfe00) === 0xfc00) return false; // fc00::/7 unique local
  if ((first & 0xffc0) === 0xfe80) return false; // fe80::/10 link-local
  if ((first & 0xffc0) === 0xfec0) return false; // fec0::/10 site-local (deprecated)
  if ((first & 0xff00) === 0xff00) return false; // ff00::/8 multicast
  if (first === 0x2001 && g[1] === 0x0db8) return false; // documentation
  if (first === 0x2001 && g[1] === 0) return false; // Teredo tunnels to arbitrary IPv4
  if (first === 0x0100 && g[1] === 0 && g[2] === 0 && g[3] === 0) return false; // discard-only
  return true;
}

/**
 * True when an address is on the public internet: not private, loopback,
 * link-local, unique-local, unspecified, multicast, documentation or
 * reserved, for IPv4 and IPv6 (an IPv6 address carrying an IPv4 one is
 * judged by the IPv4 address). Anything that is not an IP address is refused.
 */
export function isPublicAddress(ip: string): boolean {
  if (net.isIPv4(ip)) return v4Allowed(ip);
  if (net.isIPv6(ip.replace(/^\[|\]$/g, '').replace(/%.*$/, ''))) return v6Allowed(ip);
  return false;
}
