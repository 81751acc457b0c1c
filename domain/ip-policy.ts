/**
 * Classification of IP addresses for the SSRF guard. Pure: parses IPv4/IPv6 text itself, imports nothing.
 *
 * The rule the crawler applies (DESIGN.md, rule 5): only `public` addresses may be fetched unless the user
 * allows a host explicitly. Every other class names why an address is not public, so a refusal can say so.
 */

export type AddressClass =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'cgnat'
  | 'multicast'
  | 'unspecified'
  | 'metadata'
  | 'reserved'
  | 'invalid';

/** A parsed address: 4 bytes for IPv4, 16 bytes for IPv6. */
export interface ParsedAddress {
  readonly family: 4 | 6;
  readonly bytes: readonly number[];
}

/** Parses strict dotted-quad IPv4 (`a.b.c.d`, decimal, no leading zeros). */
export function parseIPv4(text: string): ParsedAddress | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  const bytes: number[] = [];
  for (const part of parts) {
    // Leading zeros are refused: some parsers read them as octal, so their meaning is ambiguous.
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part)) return undefined;
    const value = Number(part);
    if (value > 255) return undefined;
    bytes.push(value);
  }
  return { family: 4, bytes };
}

/** Parses IPv6 text: `::` compression, a trailing dotted IPv4, an optional `%zone`, optional brackets. */
export function parseIPv6(text: string): ParsedAddress | undefined {
  let s = text;
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);
  const zone = s.indexOf('%');
  if (zone !== -1) s = s.slice(0, zone);
  if (s.length === 0 || s.length > 45) return undefined;

  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const head = parseGroups(halves[0] ?? '', halves.length === 1);
  const tail = halves.length === 2 ? parseGroups(halves[1] ?? '', true) : [];
  if (head === undefined || tail === undefined) return undefined;

  const groups: number[] = [];
  if (halves.length === 2) {
    const missing = 8 - head.length - tail.length;
    if (missing < 1) return undefined;
    groups.push(...head, ...new Array<number>(missing).fill(0), ...tail);
  } else {
    groups.push(...head);
  }
  if (groups.length !== 8) return undefined;

  const bytes: number[] = [];
  for (const g of groups) bytes.push(g >> 8, g & 0xff);
  return { family: 6, bytes };
}

/** Parses colon-separated hex groups; the last one may be a dotted IPv4 (two groups) when `allowV4Tail`. */
function parseGroups(text: string, allowV4Tail: boolean): number[] | undefined {
  if (text === '') return [];
  const parts = text.split(':');
  const groups: number[] = [];
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] ?? '';
    if (i === parts.length - 1 && allowV4Tail && part.includes('.')) {
      const v4 = parseIPv4(part);
      if (v4 === undefined) return undefined;
      const [a = 0, b = 0, c = 0, d = 0] = v4.bytes;
      groups.push((a << 8) | b, (c << 8) | d);
    } else {
      if (!/^[0-9a-fA-F]{1,4}$/.test(part)) return undefined;
      groups.push(Number.parseInt(part, 16));
    }
  }
  return groups;
}

/** Parses either family; IPv6 may carry brackets or a zone id. */
export function parseIp(text: string): ParsedAddress | undefined {
  const trimmed = text.trim();
  return trimmed.includes(':') ? parseIPv6(trimmed) : parseIPv4(trimmed);
}

/** Canonical text of an address (IPv4 dotted, IPv6 lower-case fully expanded), for comparing addresses. */
export function canonicalIp(text: string): string | undefined {
  const parsed = parseIp(text);
  if (parsed === undefined) return undefined;
  if (parsed.family === 4) return parsed.bytes.join('.');
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) {
    groups.push((((parsed.bytes[i] ?? 0) << 8) | (parsed.bytes[i + 1] ?? 0)).toString(16));
  }
  return groups.join(':');
}

/** True when `text` is an IPv4 or IPv6 literal (brackets and zone allowed for IPv6). */
export function isIpLiteral(text: string): boolean {
  return parseIp(text) !== undefined;
}

interface Range {
  readonly prefix: readonly number[];
  readonly bits: number;
  readonly cls: AddressClass;
}

function cidr(text: string, cls: AddressClass): Range {
  const [addr = '', bits = ''] = text.split('/');
  const parsed = parseIp(addr);
  if (parsed === undefined) throw new Error(`bad range ${text}`);
  return { prefix: parsed.bytes, bits: Number(bits), cls };
}

function inRange(bytes: readonly number[], range: Range): boolean {
  let remaining = range.bits;
  for (let i = 0; remaining > 0; i++, remaining -= 8) {
    const mask = remaining >= 8 ? 0xff : (0xff << (8 - remaining)) & 0xff;
    if (((bytes[i] ?? 0) & mask) !== ((range.prefix[i] ?? 0) & mask)) return false;
  }
  return true;
}

/** IPv4 special-purpose ranges (IANA registry, RFC 6890 and successors). First match wins: specific first. */
const V4_RANGES: readonly Range[] = [
  // Cloud instance-metadata endpoints. AWS/GCP/Azure/OCI/DigitalOcean use 169.254.169.254; Alibaba uses
  // 100.100.100.200; Azure's WireServer is 168.63.129.16 (a Microsoft public address, reachable only in Azure).
  cidr('169.254.169.254/32', 'metadata'),
  cidr('100.100.100.200/32', 'metadata'),
  cidr('168.63.129.16/32', 'metadata'),
  cidr('0.0.0.0/8', 'unspecified'),
  cidr('10.0.0.0/8', 'private'),
  cidr('100.64.0.0/10', 'cgnat'),
  cidr('127.0.0.0/8', 'loopback'),
  cidr('169.254.0.0/16', 'link-local'),
  cidr('172.16.0.0/12', 'private'),
  cidr('192.0.0.0/24', 'reserved'), // IETF protocol assignments
  cidr('192.0.2.0/24', 'reserved'), // TEST-NET-1 (documentation)
  cidr('192.88.99.0/24', 'reserved'), // deprecated 6to4 relay anycast
  cidr('192.168.0.0/16', 'private'),
  cidr('198.18.0.0/15', 'reserved'), // benchmarking
  cidr('198.51.100.0/24', 'reserved'), // TEST-NET-2
  cidr('203.0.113.0/24', 'reserved'), // TEST-NET-3
  cidr('224.0.0.0/4', 'multicast'),
  cidr('240.0.0.0/4', 'reserved'), // future use, includes 255.255.255.255 broadcast
];

/** IPv6 ranges checked after the ones that embed an IPv4 address. First match wins. */
const V6_RANGES: readonly Range[] = [
  cidr('fd00:ec2::254/128', 'metadata'), // AWS instance metadata over IPv6
  cidr('::/128', 'unspecified'),
  cidr('::1/128', 'loopback'),
  cidr('64:ff9b:1::/48', 'private'), // local-use NAT64
  cidr('::/8', 'reserved'), // incl. deprecated IPv4-compatible ::a.b.c.d
  cidr('100::/64', 'reserved'), // discard-only
  cidr('2001:db8::/32', 'reserved'), // documentation
  cidr('2001::/23', 'reserved'), // IETF protocol assignments (Teredo, ORCHID, benchmarking...)
  cidr('3fff::/20', 'reserved'), // documentation (RFC 9637)
  cidr('5f00::/16', 'reserved'), // SRv6 SIDs
  cidr('fc00::/7', 'private'), // unique local
  cidr('fe80::/10', 'link-local'),
  cidr('fec0::/10', 'private'), // deprecated site-local
  cidr('ff00::/8', 'multicast'),
];

const V6_GLOBAL_UNICAST = cidr('2000::/3', 'public');
const V4_MAPPED = cidr('::ffff:0:0/96', 'reserved');
const NAT64 = cidr('64:ff9b::/96', 'reserved');
const SIX_TO_FOUR = cidr('2002::/16', 'reserved');

function classifyV4(bytes: readonly number[]): AddressClass {
  for (const range of V4_RANGES) if (inRange(bytes, range)) return range.cls;
  return 'public';
}

function classifyV6(bytes: readonly number[]): AddressClass {
  // Addresses that carry an IPv4 address reach that address: judge them by it.
  if (inRange(bytes, V4_MAPPED) || inRange(bytes, NAT64)) return classifyV4(bytes.slice(12, 16));
  if (inRange(bytes, SIX_TO_FOUR)) return classifyV4(bytes.slice(2, 6));
  for (const range of V6_RANGES) if (inRange(bytes, range)) return range.cls;
  return inRange(bytes, V6_GLOBAL_UNICAST) ? 'public' : 'reserved';
}

/** Classifies an IPv4 or IPv6 address given as text. Anything that does not parse is `invalid`. */
export function classifyAddress(ip: string): AddressClass {
  const parsed = parseIp(ip);
  if (parsed === undefined) return 'invalid';
  return parsed.family === 4 ? classifyV4(parsed.bytes) : classifyV6(parsed.bytes);
}

/** True for every address the crawler must not fetch by default: anything not `public`. */
export function isForbiddenAddress(ip: string): boolean {
  return classifyAddress(ip) !== 'public';
}
