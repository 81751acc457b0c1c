import { describe, expect, it } from 'vitest';
import {
  type AddressClass,
  canonicalIp,
  classifyAddress,
  isForbiddenAddress,
  parseIPv4,
  parseIPv6,
} from '../../domain/ip-policy.ts';

const cases: ReadonlyArray<readonly [string, AddressClass]> = [
  // IPv4 public
  ['8.8.8.8', 'public'],
  ['1.1.1.1', 'public'],
  ['93.184.216.34', 'public'],
  ['100.63.255.255', 'public'],
  ['100.128.0.0', 'public'],
  ['172.15.255.255', 'public'],
  ['172.32.0.0', 'public'],
  ['192.167.255.255', 'public'],
  ['192.169.0.0', 'public'],
  ['198.17.255.255', 'public'],
  ['198.20.0.0', 'public'],
  ['223.255.255.255', 'public'],
  ['169.253.255.255', 'public'],
  // IPv4 special
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['10.0.0.1', 'private'],
  ['10.255.255.255', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['100.64.0.1', 'cgnat'],
  ['100.127.255.255', 'cgnat'],
  ['127.0.0.1', 'loopback'],
  ['127.0.0.2', 'loopback'],
  ['127.255.255.255', 'loopback'],
  ['169.254.0.1', 'link-local'],
  ['169.254.255.255', 'link-local'],
  ['169.254.169.254', 'metadata'],
  ['100.100.100.200', 'metadata'],
  ['168.63.129.16', 'metadata'],
  ['192.0.0.8', 'reserved'],
  ['192.0.2.1', 'reserved'],
  ['198.51.100.7', 'reserved'],
  ['203.0.113.9', 'reserved'],
  ['198.18.0.1', 'reserved'],
  ['198.19.255.255', 'reserved'],
  ['192.88.99.1', 'reserved'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['240.0.0.1', 'reserved'],
  ['255.255.255.255', 'reserved'],
  // IPv6
  ['2606:4700:4700::1111', 'public'],
  ['2001:4860:4860::8888', 'public'],
  ['2a00:1450:4001:80b::200e', 'public'],
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['0:0:0:0:0:0:0:1', 'loopback'],
  ['[::1]', 'loopback'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local'],
  ['febf:ffff::1', 'link-local'],
  ['fc00::1', 'private'],
  ['fd12:3456:789a::1', 'private'],
  ['fec0::1', 'private'],
  ['fd00:ec2::254', 'metadata'],
  ['FD00:EC2:0:0:0:0:0:254', 'metadata'],
  ['ff02::1', 'multicast'],
  ['ff05::1:3', 'multicast'],
  ['2001:db8::1', 'reserved'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'reserved'], // Teredo
  ['3fff::1', 'reserved'],
  ['100::1', 'reserved'],
  ['::127.0.0.1', 'reserved'], // deprecated IPv4-compatible
  ['4000::1', 'reserved'], // outside 2000::/3
  ['64:ff9b:1::1', 'private'],
  // IPv6 carrying IPv4: judged by the IPv4 inside
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['::FFFF:10.1.2.3', 'private'],
  ['::ffff:169.254.169.254', 'metadata'],
  ['::ffff:a9fe:a9fe', 'metadata'],
  ['::ffff:8.8.8.8', 'public'],
  ['::ffff:0.0.0.0', 'unspecified'],
  ['64:ff9b::7f00:1', 'loopback'],
  ['64:ff9b::8.8.8.8', 'public'],
  ['2002:7f00:1::1', 'loopback'], // 6to4 of 127.0.0.1
  ['2002:c0a8:101::1', 'private'], // 6to4 of 192.168.1.1
  ['2002:808:808::1', 'public'],
  // invalid
  ['', 'invalid'],
  ['localhost', 'invalid'],
  ['256.1.1.1', 'invalid'],
  ['1.2.3', 'invalid'],
  ['1.2.3.4.5', 'invalid'],
  ['01.2.3.4', 'invalid'],
  ['0x7f.0.0.1', 'invalid'],
  ['2130706433', 'invalid'],
  [' 1.2.3.4x', 'invalid'],
  ['1::2::3', 'invalid'],
  ['1:2:3:4:5:6:7:8:9', 'invalid'],
  ['1:2:3:4:5:6:7:8::', 'invalid'],
  ['12345::1', 'invalid'],
  ['::ffff:256.0.0.1', 'invalid'],
  ['g::1', 'invalid'],
  [':1:2:3:4:5:6:7', 'invalid'],
];

describe('classifyAddress', () => {
  it.each(cases)('%s → %s', (ip, expected) => {
    expect(classifyAddress(ip)).toBe(expected);
  });

  it('forbids everything but public addresses', () => {
    for (const [ip, cls] of cases) expect(isForbiddenAddress(ip)).toBe(cls !== 'public');
  });
});

describe('parsing', () => {
  it('parses IPv4 into four bytes', () => {
    expect(parseIPv4('192.168.0.255')?.bytes).toEqual([192, 168, 0, 255]);
  });

  it('expands :: and a dotted IPv4 tail', () => {
    expect(parseIPv6('::ffff:1.2.3.4')?.bytes).toEqual([
      0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 1, 2, 3, 4,
    ]);
    expect(parseIPv6('1::')?.bytes.slice(0, 2)).toEqual([0, 1]);
    expect(parseIPv6('1:2:3:4:5:6:7::')?.bytes.slice(12)).toEqual([0, 7, 0, 0]);
  });

  it('gives one canonical text per address', () => {
    expect(canonicalIp('::1')).toBe(canonicalIp('0:0:0:0:0:0:0:1'));
    expect(canonicalIp('[FE80::A%en0]')).toBe('fe80:0:0:0:0:0:0:a');
    expect(canonicalIp('127.0.0.1')).toBe('127.0.0.1');
    expect(canonicalIp('example.com')).toBeUndefined();
  });
});
