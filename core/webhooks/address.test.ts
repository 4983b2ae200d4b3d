import { describe, expect, it } from 'vitest';
import { isPrivateAddress, privateHostProblem } from './address.js';

describe('isPrivateAddress', () => {
  it('refuses loopback, RFC 1918, link-local and the metadata address', () => {
    for (const address of ['127.0.0.1', '127.8.9.10', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '0.0.0.0', '100.64.0.1']) {
      expect(isPrivateAddress(address), address).toBe(true);
    }
  });

  it('refuses the IPv6 equivalents, including IPv4 addresses mapped into IPv6', () => {
    for (const address of ['::1', '::', 'fe80::1', 'fd00:ec2::254', 'fc00::5', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:a9fe:a9fe', '[::1]', 'fe80::1%eth0']) {
      expect(isPrivateAddress(address), address).toBe(true);
    }
  });

  it('refuses every IPv6 form that carries a private IPv4 address: 6to4, NAT64, IPv4-compatible, SIIT, Teredo', () => {
    for (const address of [
      '2002:7f00:1::', '2002:a00:1::1', '2002:a9fe:a9fe::', '64:ff9b::7f00:1', '64:ff9b::127.0.0.1', '64:ff9b:1::a00:1',
      '::7f00:1', '::127.0.0.1', '::ffff:0:7f00:1', '0:0:0:0:0:ffff:7f00:1', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001::1',
    ]) {
      expect(isPrivateAddress(address), address).toBe(true);
    }
  });

  it('lets public addresses through', () => {
    for (const address of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '2002:808:808::1', '64:ff9b::808:808']) {
      expect(isPrivateAddress(address), address).toBe(false);
    }
  });
});

describe('privateHostProblem', () => {
  it('names localhost and literal private addresses, and leaves host names to the resolver', () => {
    expect(privateHostProblem(new URL('http://localhost:8080/hook'))).toMatch(/localhost/);
    expect(privateHostProblem(new URL('http://[::1]/hook'))).toMatch(/::1/);
    expect(privateHostProblem(new URL('https://169.254.169.254/latest'))).toMatch(/169\.254\.169\.254/);
    expect(privateHostProblem(new URL('https://hooks.example.com/x'))).toBeUndefined();
    expect(privateHostProblem(new URL('https://8.8.8.8/x'))).toBeUndefined();
  });

  it('refuses the other spellings of this machine: a trailing dot, decimal, octal and hex IPv4, embedded IPv4', () => {
    for (const url of [
      'http://localhost./', 'http://LOCALHOST../', 'http://api.localhost./', 'http://2130706433/', 'http://0x7f.1/', 'http://0177.0.0.1/',
      'http://127.1/', 'http://127.0.0.1./', 'http://0/', 'http://[2002:7f00:1::]/', 'http://[::127.0.0.1]/', 'http://[64:ff9b::127.0.0.1]/',
      'http://[::ffff:169.254.169.254]/',
    ]) {
      expect(privateHostProblem(new URL(url)), url).toBeDefined();
    }
  });
});
