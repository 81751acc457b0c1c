/**
 * The same rules for the browser as for a plain fetch, applied to every request a rendered page
 * makes (its own navigation, scripts, XHR/fetch calls): same origin only, robots.txt obeyed, the
 * SSRF guard's resolved-address check with the crawl's allow-hosts; and what text never needs
 * (images, fonts, media, beacons) is not loaded at all.
 */
import { originOf } from '../../domain/url';
import { BlockedUrlError } from '../http/errors';
import { checkUrl } from '../http/ssrf-guard';
import type { RobotsPolicy } from '../robots-policy';
import type { GuardedRequest, RequestGuard } from './render-page';

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
  /** The origin of the page being rendered; requests anywhere else are third-party. */
  pageOrigin: string;
  userAgent: string;
  allowHosts: readonly string[];
  robots: RobotsPolicy;
  signal?: AbortSignal;
}

export function createRequestGuard(options: RequestGuardOptions): RequestGuard {
  // One SSRF verdict per host and render: the page's requests mostly share a host.
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
    // data: and blob: URLs never reach the network.
    if (url.protocol === 'data:' || url.protocol === 'blob:') return undefined;
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return `scheme ${url.protocol} not allowed`;
    const origin = originOf(url.href);
    if (origin !== options.pageOrigin) return `third-party request to ${origin}`;
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
      ...(options.signal ? { signal: options.signal } : {}),
    });
    return undefined;
  } catch (error) {
    if (error instanceof BlockedUrlError) return `blocked by the SSRF guard: ${error.message}`;
    return `address check failed: ${(error as Error).message}`;
  }
}
