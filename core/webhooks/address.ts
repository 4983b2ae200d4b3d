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

/** The IPv4 address inside an IPv4-mapped (::ffff:a.b.c.d) or NAT64 (64:ff9b::a.b.c.d) IPv6 address. */
function embeddedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (!hex) return undefined;
  const [high, low] = [parseInt(hex[1], 16), parseInt(hex[2], 16)];
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** True for an IP address on loopback, link-local, private, metadata or reserved ranges (IPv4 or IPv6). */
export function isPrivateAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return PRIVATE.check(bare, 'ipv4');
  if (family === 6) {
    const v4 = embeddedIpv4(bare);
    return v4 ? PRIVATE.check(v4, 'ipv4') : PRIVATE.check(bare, 'ipv6');
  }
  return false;
}

/**
 * Why a URL's host is refused before anything is resolved: a literal private address, or a name that always
 * means this machine. Undefined when the host may be tried (its resolved address is checked at delivery).
 */
export function privateHostProblem(url: URL): string | undefined {
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return 'Webhook URLs cannot point to this machine (localhost).';
  if (isIP(host) && isPrivateAddress(host)) return `Webhook URLs cannot point to a private or reserved address (${host}).`;
  return undefined;
}
