import { BlockList, isIP } from 'node:net';

/**
 * Addresses a webhook must not reach unless the operator allows it (TILL_WEBHOOKS_ALLOW_PRIVATE=1): this
 * host and its network (loopback, RFC 1918, carrier-grade NAT, link-local — which holds the cloud metadata
 * service 169.254.169.254 — unique-local IPv6, multicast and reserved ranges). Checked on the address a
 * host name resolves to, at connection time, so a DNS answer cannot swap a public address for a private one.
 */
const PRIVATE = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24],
  ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['2001:db8::', 32], ['100::', 64],
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv6');
}

/** The sixteen bytes of an IPv6 address (any spelling Node accepts, an IPv4 tail included). */
function ipv6Bytes(address: string): number[] {
  let text = address.toLowerCase();
  const v4Tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4Tail) {
    const [a, b, c, d] = v4Tail[1].split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, -v4Tail[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const groups = (part: string | undefined) => (part ? part.split(':') : []);
  const left = groups(head);
  const right = groups(tail);
  const all = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return all.flatMap((group) => {
    const value = parseInt(group, 16);
    return [value >> 8, value & 255];
  });
}

const zero = (bytes: number[]) => bytes.every((byte) => byte === 0);

/**
 * The IPv4 address an IPv6 address carries, for every form that delivers to it: IPv4-mapped (::ffff:0:0/96),
 * SIIT (::ffff:0:0:0/96), IPv4-compatible (::/96), NAT64 (64:ff9b::/96, 64:ff9b:1::/48) and 6to4 (2002::/16).
 */
function embeddedIpv4(address: string): string | undefined {
  const bytes = ipv6Bytes(address);
  const last = bytes.slice(12).join('.');
  if (zero(bytes.slice(0, 10)) && bytes[10] === 255 && bytes[11] === 255) return last;
  if (zero(bytes.slice(0, 8)) && bytes[8] === 255 && bytes[9] === 255 && zero(bytes.slice(10, 12))) return last;
  if (zero(bytes.slice(0, 12))) return last;
  if (bytes[0] === 0 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && (zero(bytes.slice(4, 12)) || (bytes[4] === 0 && bytes[5] === 1))) return last;
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return bytes.slice(2, 6).join('.');
  return undefined;
}

/** Teredo (2001::/32) hides its client's IPv4 address (XOR-ed) and tunnels through relays: never a webhook target. */
const isTeredo = (address: string) => {
  const bytes = ipv6Bytes(address);
  return bytes[0] === 0x20 && bytes[1] === 0x01 && bytes[2] === 0 && bytes[3] === 0;
};

/** True for an IP address on loopback, link-local, private, metadata or reserved ranges (IPv4 or IPv6, in any form). */
export function isPrivateAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return PRIVATE.check(bare, 'ipv4');
  if (family === 6) {
    if (isTeredo(bare)) return true;
    const v4 = embeddedIpv4(bare);
    return (v4 !== undefined && PRIVATE.check(v4, 'ipv4')) || PRIVATE.check(bare, 'ipv6');
  }
  return false;
}

/**
 * Why a URL's host is refused before anything is resolved: a literal private address (the URL parser has already
 * turned decimal, octal and hex IPv4 into dotted form), or a name that always means this machine. Checked at
 * creation and again at delivery; undefined when the host may be tried (its resolved address is checked then too).
 */
export function privateHostProblem(url: URL): string | undefined {
  // A trailing dot is the same name, fully qualified (localhost. is this machine too).
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase().replace(/\.+$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return 'Webhook URLs cannot point to this machine (localhost).';
  if (isIP(host) && isPrivateAddress(host)) return `Webhook URLs cannot point to a private or reserved address (${host}).`;
  return undefined;
}
