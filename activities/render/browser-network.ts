/**
 * The browser's only way out: every request a rendered page makes is answered here, through
 * gleaner's own guarded HTTP client (`fetchPage`: SSRF check on the resolved addresses, a socket
 * pinned to exactly those addresses, size caps, timeouts), never by Chromium's network stack.
 * Redirects are followed here one hop at a time so each hop passes the request guard (origin,
 * resource type, robots.txt) and the SSRF guard before anything is sent to it: Chromium does not
 * route the follow-up of a fulfilled redirect, so handing it a 3xx would let it go out by itself.
 */
import { originOf } from '../../domain/url';
import { fetchPage } from '../http/fetch-page';
import type { FetchPageResult } from '../http/fetch-result';
import type { Resolver } from '../http/ssrf-guard';
import { abortableSleep, RequestSpacing } from '../politeness-wait';
import type { RobotsPolicy } from '../robots-policy';
import { createRequestGuard, type RequestGuard } from './request-guard';
import { SubresourceCache } from './subresource-cache';

export interface BrowserRequest {
  url: string;
  method: string;
  /** Playwright's resource type: document, script, xhr, fetch, image, font, media, stylesheet… */
  resourceType: string;
  /** The page's own navigation (not a frame's, not a sub-resource). */
  isNavigation: boolean;
}

export type BrowserFetchOutcome =
  | {
      kind: 'response';
      /** The URL that answered, after redirects. */
      url: string;
      status: number;
      /** Headers to hand the browser (lower-case names; no transfer or content encodings). */
      headers: Record<string, string>;
      /** Decoded (decompressed) body; empty for a non-2xx answer. */
      body: Buffer;
      /** The body as text in its declared or sniffed charset. */
      text: string;
      redirects: string[];
    }
  /** Not sent (or a redirect not followed): `url` is the hop that was refused. */
  | { kind: 'refused'; url: string; reason: string }
  /** Sent, but no usable answer (network error, timeout, over the size cap). */
  | { kind: 'failed'; url: string; reason: string };

export interface BrowserNetworkOptions {
  userAgent: string;
  allowHosts: readonly string[];
  /** robots.txt rules (the crawl's RobotsPolicy; its `check` is all this needs). */
  robots: Pick<RobotsPolicy, 'check'>;
  /** Redirect hops followed for one request. @default 5 */
  maxRedirects?: number;
  /** Cap on every response body; the page's own document is cut there, anything else refused. */
  maxBodyBytes: number;
  /** Total time for one response body. */
  bodyTimeoutMs?: number;
  /**
   * Requests in flight at once for one page. One, so a rendered page keeps the crawler's promise of
   * never two requests in flight to an origin (its scripts and stylesheets come one after another;
   * Chromium alone would open 6 per host). @default 1
   */
  maxConcurrent?: number;
  /**
   * Least time from the end of one response to the next request, in ms: the origin's politeness
   * gap (the larger of --delay-ms and Crawl-delay) holds between a rendered page's own requests
   * too. The first request (the document) is not delayed: the workflow waited the gap before it.
   * @default 0
   */
  minGapMs?: number;
  /**
   * Wall-clock time (ms since the epoch) after which no further sub-resource is requested: one
   * whose turn (its gap waited) would come later is refused, so a paced page still renders within
   * its navigation deadline, with what it got. @default no limit
   */
  sendByMs?: number;
  /** Scripts and stylesheets kept between renders (looked up after the request guard). @default none */
  cache?: SubresourceCache;
  /** Name resolution for the SSRF guard and the pinned socket. @default the system resolver */
  resolve?: Resolver;
  signal?: AbortSignal;
}

export interface BrowserNetwork {
  fetch(request: BrowserRequest): Promise<BrowserFetchOutcome>;
  /** Aborts every request still in flight (the page is done with). */
  close(): void;
}

/**
 * Headers of a fetched response handed to the browser (the body is already decoded). No
 * set-cookie: a crawler keeps no session, and the browser's own request headers are not forwarded
 * either (the client sends its own User-Agent and Accept).
 */
const PASSED_HEADERS = [
  'content-type',
  'content-language',
  'etag',
  'last-modified',
  'x-robots-tag',
  'retry-after',
] as const;

export function createBrowserNetwork(options: BrowserNetworkOptions): BrowserNetwork {
  const done = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, done.signal]) : done.signal;
  const maxRedirects = options.maxRedirects ?? 5;
  const slots = limiter(options.maxConcurrent ?? 1);
  const minGapMs = options.minGapMs ?? 0;
  // The gap from the end of each response to this page's requests to the next (politeness-wait.ts):
  // all of them count against the page's origin, the one whose workflow waited before the render.
  const spacing = new RequestSpacing(abortableSleep(signal));
  const PAGE = 'page';
  const guards = new Map<string, RequestGuard>();
  // Sub-resources belong to the origin the page's document finally came from.
  let pageOrigin: string | undefined;

  const guardFor = (origin: string): RequestGuard => {
    let guard = guards.get(origin);
    if (!guard) {
      guard = createRequestGuard({
        pageOrigin: origin,
        userAgent: options.userAgent,
        allowHosts: options.allowHosts,
        robots: options.robots,
        ...(options.resolve ? { resolve: options.resolve } : {}),
        signal,
      });
      guards.set(origin, guard);
    }
    return guard;
  };

  async function fetchOne(request: BrowserRequest): Promise<BrowserFetchOutcome> {
    const redirects: string[] = [];
    let url = request.url;
    for (;;) {
      const origin = request.isNavigation ? safeOrigin(url) : (pageOrigin ?? safeOrigin(request.url));
      const refusal = origin
        ? await guardFor(origin)({
            url,
            resourceType: request.resourceType,
            isNavigation: request.isNavigation,
          })
        : 'not a valid URL';
      if (refusal) return { kind: 'refused', url, reason: refusal };
      if (request.method !== 'GET')
        return { kind: 'refused', url, reason: `${request.method} not sent: a crawler only reads` };
      signal.throwIfAborted();
      const cacheable =
        !request.isNavigation && options.cache && SubresourceCache.accepts(request.resourceType);
      const cached = cacheable ? options.cache?.get(url) : undefined;
      if (cached) return { kind: 'response', url, ...cached, redirects };
      const fetched = await slots(async () => {
        // A turn (its gap waited) past the page's time budget is refused rather than waited for.
        const turnAtMs = Date.now() + spacing.leftMs(PAGE, minGapMs);
        const late = !request.isNavigation && options.sendByMs !== undefined && turnAtMs > options.sendByMs;
        if (minGapMs > 0 && late) return undefined;
        await spacing.wait(PAGE, minGapMs);
        try {
          return await sendOne(url, request);
        } finally {
          spacing.ended(PAGE);
        }
      });
      if (!fetched)
        return {
          kind: 'refused',
          url,
          reason: `not requested: the politeness gap of ${minGapMs} ms would pass the page's time budget`,
        };
      if (fetched.kind === 'redirect-limit') {
        redirects.push(url);
        if (redirects.length > maxRedirects)
          return { kind: 'refused', url: fetched.location, reason: `more than ${maxRedirects} redirects` };
        if (redirects.includes(fetched.location))
          return { kind: 'refused', url: fetched.location, reason: 'redirect loop' };
        url = fetched.location;
        continue;
      }
      const result = outcome(url, fetched, redirects);
      if (cacheable && result.kind === 'response' && redirects.length === 0)
        options.cache?.put(
          url,
          { status: result.status, headers: result.headers, body: result.body, text: result.text },
          fetched.headers['cache-control'],
        );
      return result;
    }
  }

  function sendOne(url: string, request: BrowserRequest): Promise<FetchPageResult> {
    return fetchPage(url, {
      userAgent: options.userAgent,
      allowHosts: options.allowHosts,
      // One hop per call: the next hop is guarded above before it is sent.
      maxRedirects: 0,
      maxBodyBytes: options.maxBodyBytes,
      // The page itself is cut and kept like a plain fetch; a cut script or JSON would be garbage.
      truncateBody: request.isNavigation,
      ...(request.isNavigation ? {} : { allowedContentTypes: ['*/*'] }),
      ...(options.bodyTimeoutMs ? { bodyTimeoutMs: options.bodyTimeoutMs } : {}),
      ...(options.resolve ? { resolve: options.resolve } : {}),
      signal,
    });
  }

  return {
    async fetch(request) {
      const result = await fetchOne(request);
      if (request.isNavigation && result.kind === 'response') pageOrigin = originOf(result.url);
      return result;
    },
    close: () => done.abort(new Error('the rendered page is closed')),
  };
}

function outcome(url: string, fetched: FetchPageResult, redirects: string[]): BrowserFetchOutcome {
  const headers: Record<string, string> = {};
  for (const name of PASSED_HEADERS) {
    const value = fetched.headers[name];
    if (value !== undefined) headers[name] = value;
  }
  const answer = (body: Buffer, text: string): BrowserFetchOutcome => ({
    kind: 'response',
    url,
    status: fetched.status ?? 0,
    headers,
    body,
    text,
    redirects,
  });
  switch (fetched.kind) {
    case 'ok':
      return answer(fetched.body, fetched.text);
    case 'http-error':
    case 'not-modified':
    case 'unsupported-content-type':
      // The status (and content type) is the answer; the body is never read for these.
      return answer(Buffer.alloc(0), '');
    case 'blocked':
      return { kind: 'refused', url, reason: `blocked by the SSRF guard: ${fetched.message}` };
    case 'too-large':
      return { kind: 'failed', url, reason: `body larger than ${fetched.limitBytes} bytes` };
    case 'network-error':
      return { kind: 'failed', url, reason: `${fetched.code}: ${fetched.message}` };
    case 'redirect-limit':
      return { kind: 'refused', url: fetched.location, reason: 'redirect not followed' };
  }
}

function safeOrigin(url: string): string | undefined {
  try {
    return originOf(url);
  } catch {
    return undefined;
  }
}

/** At most `max` calls running at once; the rest wait their turn in order. */
function limiter(max: number) {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async <T>(call: () => Promise<T>): Promise<T> => {
    if (running >= max) await new Promise<void>((resolve) => waiting.push(resolve));
    else running++;
    try {
      return await call();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}
