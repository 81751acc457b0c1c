/**
 * The crawler's rules for each request (and each redirect hop) a rendered page makes: what text
 * never needs (images, fonts, media, beacons) is not loaded at all, sub-resources stay on the
 * page's origin, only http(s), the SSRF guard's address check, and robots.txt is obeyed. The
 * address check here is early (once per host and page, before robots.txt is asked, for a clear
 * reason); the one that counts is repeated for every request by the browser network
 * (browser-network.ts), whose socket connects only to the addresses that check approved.
 */
import { originOf } from '../../domain/url';
import { BlockedUrlError } from '../http/errors';
import { checkUrl, type Resolver } from '../http/ssrf-guard';
import type { RobotsPolicy } from '../robots-policy';

export interface GuardedRequest {
  url: string;
  /** Playwright's resource type: document, script, xhr, fetch, image, font, media, stylesheet… */
  resourceType: string;
  /** The page's own navigation or one of its redirect hops, not a frame's or a sub-resource. */
  isNavigation: boolean;
}

/** Returns why a request is refused, or undefined to let it through. */
export type RequestGuard = (request: GuardedRequest) => Promise<string | undefined>;

/** Resource types skipped outright: they cost bytes and requests and add no text. */
export const SKIPPED_RESOURCE_TYPES = new Set([
  'image',
  'font',
  'media',
  'texttrack',
  'manifest',
  'websocket',
  'eventsource',
  'ping',
  'other',
]);

export interface RequestGuardOptions {
  /** The origin of the page being rendered; sub-resources anywhere else are third-party. */
  pageOrigin: string;
  userAgent: string;
  allowHosts: readonly string[];
  /** robots.txt rules (the crawl's RobotsPolicy; its `check` is all this needs). */
  robots: Pick<RobotsPolicy, 'check'>;
  /** @default the system resolver */
  resolve?: Resolver;
  signal?: AbortSignal;
}

export function createRequestGuard(options: RequestGuardOptions): RequestGuard {
  const hostVerdicts = new Map<string, Promise<string | undefined>>();
  return async (request: GuardedRequest) => {
    if (!request.isNavigation && SKIPPED_RESOURCE_TYPES.has(request.resourceType))
      return `${request.resourceType} not loaded`;
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return 'not a valid URL';
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return `scheme ${url.protocol} not allowed`;
    const origin = originOf(url.href);
    // The page's own redirects may change origin (http to https), as a plain fetch's do.
    if (!request.isNavigation && origin !== options.pageOrigin) return `third-party request to ${origin}`;
    let verdict = hostVerdicts.get(url.host);
    if (!verdict) {
      verdict = ssrfVerdict(url, options);
      hostVerdicts.set(url.host, verdict);
    }
    const blocked = await verdict;
    if (blocked) return blocked;
    const robots = await options.robots.check(url.href, origin, {
      userAgent: options.userAgent,
      allowHosts: [...options.allowHosts],
      ...(options.signal ? { signal: options.signal } : {}),
    });
    return robots.allowed ? undefined : 'disallowed by robots.txt';
  };
}

async function ssrfVerdict(url: URL, options: RequestGuardOptions): Promise<string | undefined> {
  try {
    await checkUrl(url, {
      allowHosts: options.allowHosts,
      ...(options.resolve ? { resolve: options.resolve } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    return undefined;
  } catch (error) {
    if (error instanceof BlockedUrlError) return `blocked by the SSRF guard: ${error.message}`;
    return `address check failed: ${(error as Error).message}`;
  }
}
