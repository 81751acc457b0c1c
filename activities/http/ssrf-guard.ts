/**
 * SSRF guard: decides whether a URL may be fetched, on the addresses it really resolves to, and builds an
 * undici client that connects only to those checked addresses (no DNS-rebinding gap between check and
 * connect). Used on every hop of a redirect chain.
 */

import type { LookupAddress } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { Client } from 'undici';
import { type AddressClass, canonicalIp, classifyAddress, parseIp } from '../../domain/ip-policy.ts';
import { BlockedUrlError, FetchTimeoutError } from './errors.ts';

export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

/** Resolves a host name to every address it has. Injectable for tests and custom DNS. */
export type Resolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

/** The operating system's resolver (`dns.promises.lookup` with `all: true`), as the HTTP stack would use. */
export const systemResolver: Resolver = async (hostname) => {
  const found = await dnsLookup(hostname, { all: true, verbatim: true });
  return found.map((entry) => ({ address: entry.address, family: entry.family === 6 ? 6 : 4 }));
};

export interface SsrfGuardOptions {
  /** Host names or IP literals allowed even when they resolve to non-public addresses (case-insensitive). */
  readonly allowHosts: readonly string[];
  /** @default systemResolver */
  readonly resolve?: Resolver;
  /** Time allowed for name resolution; on expiry a `FetchTimeoutError('connect')` is thrown. @default 10_000 */
  readonly resolveTimeoutMs?: number;
  readonly signal?: AbortSignal;
}

/** A URL that passed the guard, with every address it resolved to (all of them checked). */
export interface CheckedTarget {
  readonly url: URL;
  /** Lower-case host without brackets or trailing dot. */
  readonly hostname: string;
  readonly addresses: readonly ResolvedAddress[];
}

/** Normalises a host or allow-list entry: lower case, no brackets, no trailing dot, canonical IP text. */
export function normalizeHost(host: string): string {
  let h = host.trim().toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  h = h.replace(/\.+$/, '');
  return canonicalIp(h) ?? h;
}

/**
 * Checks a URL; resolves to the target to connect to or rejects with `BlockedUrlError`. DNS failures and
 * timeouts reject with the resolver's own error (`ENOTFOUND`...) or `FetchTimeoutError('connect')`.
 */
export async function checkUrl(input: string | URL, options: SsrfGuardOptions): Promise<CheckedTarget> {
  const text = String(input);
  let url: URL;
  try {
    url = new URL(text);
  } catch (cause) {
    throw new BlockedUrlError('invalid-url', text, `not a valid absolute URL: ${text}`, { cause });
  }
  const href = url.href;
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new BlockedUrlError('unsupported-scheme', href, `scheme ${url.protocol} is not http or https`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new BlockedUrlError('credentials-in-url', href, 'URLs with credentials are never fetched');
  }
  const hostname = normalizeHost(url.hostname);
  if (hostname === '') throw new BlockedUrlError('invalid-url', href, 'URL has no host');
  if (hostname === 'onion' || hostname.endsWith('.onion')) {
    throw new BlockedUrlError('onion-host', href, 'Tor .onion hosts are not fetched');
  }

  const literal = parseIp(hostname);
  const addresses: readonly ResolvedAddress[] = literal
    ? [{ address: hostname, family: literal.family }]
    : await resolveWithTimeout(hostname, options);
  if (addresses.length === 0) {
    throw Object.assign(new Error(`no addresses for ${hostname}`), { code: 'ENOTFOUND' });
  }

  const allowed = new Set(options.allowHosts.map(normalizeHost));
  for (const { address } of addresses) {
    const cls: AddressClass = classifyAddress(address);
    if (cls === 'public') continue;
    const explicitlyAllowed = allowed.has(hostname) || allowed.has(normalizeHost(address));
    if (cls !== 'invalid' && explicitlyAllowed) continue;
    throw new BlockedUrlError(
      'forbidden-address',
      href,
      `${hostname} resolves to ${address} (${cls}); to fetch it, allow it with --allow-host ${hostname} (allowHosts in the API)`,
      { address, addressClass: cls },
    );
  }
  return { url, hostname, addresses };
}

async function resolveWithTimeout(
  hostname: string,
  options: SsrfGuardOptions,
): Promise<readonly ResolvedAddress[]> {
  const resolve = options.resolve ?? systemResolver;
  const timeoutMs = options.resolveTimeoutMs ?? 10_000;
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new FetchTimeoutError('connect', timeoutMs)), timeoutMs);
    onAbort = () => reject(options.signal?.reason);
    options.signal?.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([resolve(hostname), deadline]);
  } finally {
    clearTimeout(timer);
    if (onAbort) options.signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * Connect options that can only reach the checked addresses: the socket's `lookup` answers from them
 * instead of asking DNS again. The URL keeps its host name, so the Host header and the TLS servername
 * (SNI and certificate check) stay those of the original host.
 */
export function pinnedConnectOptions(
  target: CheckedTarget,
  connectTimeoutMs: number,
): { timeout: number; lookup: LookupFunction } {
  const lookup: LookupFunction = (hostname, opts, callback) => {
    if (normalizeHost(hostname) !== target.hostname) {
      const err = Object.assign(new Error(`unexpected lookup of ${hostname}`), { code: 'ENOTFOUND' });
      callback(err, '', 0);
      return;
    }
    const wanted = opts.family === 4 || opts.family === 6 ? opts.family : undefined;
    const matching = target.addresses.filter((a) => wanted === undefined || a.family === wanted);
    const list: LookupAddress[] = (matching.length > 0 ? matching : target.addresses).map((a) => ({
      address: a.address,
      family: a.family,
    }));
    const first = list[0];
    if (first === undefined) {
      callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
    } else if (opts.all) {
      callback(null, list);
    } else {
      callback(null, first.address, first.family);
    }
  };
  return { timeout: connectTimeoutMs, lookup };
}

/**
 * A one-shot undici client for the target's origin, pinned to the checked addresses
 * (`pinnedConnectOptions`). The caller owns the client and must `destroy()` it.
 */
export function createPinnedClient(target: CheckedTarget, connectTimeoutMs: number): Client {
  return new Client(target.url.origin, {
    connect: pinnedConnectOptions(target, connectTimeoutMs),
    pipelining: 1,
  });
}
