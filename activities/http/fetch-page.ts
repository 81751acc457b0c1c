/**
 * One polite, guarded HTTP GET of a page: redirects followed by hand with the SSRF guard on every hop,
 * every limit enforced (time per phase, body size before and after decompression, redirects), and every
 * outcome returned as a `FetchPageResult` instead of thrown. One attempt only: Temporal owns retries.
 * Rejects only when `options.signal` aborts, or with `InvalidFetchOptionsError` for bad options.
 */
import type { Dispatcher } from 'undici';
import { decodeBody } from './charset.ts';
import { BlockedUrlError, BodyTooLargeError, FetchTimeoutError, type TimeoutPhase } from './errors.ts';
import {
  type FetchPageOptions,
  isAllowedContentType,
  mediaTypeOf,
  mergeFetchOptions,
  type ResolvedFetchOptions,
} from './fetch-options.ts';
import {
  type FetchPageResult,
  type FetchResultBase,
  SELECTED_HEADERS,
  type SelectedHeaders,
} from './fetch-result.ts';
import { originConnections } from './origin-connections.ts';
import { type BodyProgress, parseContentEncoding, readBody, unsupportedEncoding } from './read-body.ts';
import { type CheckedTarget, checkUrl } from './ssrf-guard.ts';

export const ACCEPT_HEADER = 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.1';
export const ACCEPT_ENCODING_HEADER = 'gzip, deflate, br';
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** State of one `fetchPage` call across its hops. */
interface Chain {
  readonly requestedUrl: string;
  readonly redirects: string[];
  firstRedirectStatus?: number;
  readonly startedAtMs: number;
  readonly startedAtPerfMs: number;
  ttfbMs?: number;
}

/** What one hop produced: a final result, or a redirect to follow. */
type HopOutcome =
  | { readonly kind: 'result'; readonly result: FetchPageResult }
  | {
      readonly kind: 'redirect';
      readonly location: string;
      readonly status: number;
      readonly headers: SelectedHeaders;
    };

export async function fetchPage(url: string, options: FetchPageOptions): Promise<FetchPageResult> {
  const opts = mergeFetchOptions(options);
  opts.signal?.throwIfAborted();
  const chain: Chain = {
    requestedUrl: url,
    redirects: [],
    startedAtMs: Date.now(),
    startedAtPerfMs: performance.now(),
  };
  const visited = new Set<string>([withoutHash(url)]);
  let current = url;
  let target = await guardHop(current, opts, chain);
  for (;;) {
    if (target.kind === 'result') return target.result;
    // Validators belong to the page asked for: a hop is another resource, whose server would judge
    // them against its own copy and could answer 304 for a page the crawl never stored.
    const hopOpts = chain.redirects.length === 0 ? opts : withoutValidators(opts);
    const outcome = await fetchHop(current, target.target, hopOpts, chain);
    if (outcome.kind === 'result') return outcome.result;

    chain.redirects.push(current);
    chain.firstRedirectStatus ??= outcome.status;
    const next = outcome.location;
    const extra = { status: outcome.status, headers: outcome.headers };
    if (visited.has(next)) {
      return { kind: 'redirect-limit', reason: 'loop', location: next, ...base(chain, current, extra) };
    }
    if (chain.redirects.length > opts.maxRedirects) {
      return { kind: 'redirect-limit', reason: 'too-many', location: next, ...base(chain, current, extra) };
    }
    // The guard's verdict on the address comes first: a hop it refuses is reported as `blocked`, and
    // its host is never asked for a robots.txt by `beforeRedirect`. The addresses it checked are the
    // ones the hop connects to: one resolution per hop, so nothing can change between check and connect.
    const nextTarget = await guardHop(next, opts, chain);
    if (opts.beforeRedirect && nextTarget.kind === 'target' && !(await opts.beforeRedirect(next))) {
      return { kind: 'redirect-limit', reason: 'refused', location: next, ...base(chain, current, extra) };
    }
    visited.add(next);
    current = next;
    target = nextTarget;
  }
}

function withoutValidators(opts: ResolvedFetchOptions): ResolvedFetchOptions {
  const { ifNoneMatch: _etag, ifModifiedSince: _date, ...rest } = opts;
  return rest;
}

/** The SSRF guard's verdict on one hop: the checked addresses to connect to, or the final result. */
type GuardedHop =
  | { readonly kind: 'target'; readonly target: CheckedTarget }
  | { readonly kind: 'result'; readonly result: FetchPageResult };

async function guardHop(url: string, opts: ResolvedFetchOptions, chain: Chain): Promise<GuardedHop> {
  try {
    return { kind: 'target', target: await checkUrl(url, guardOptions(opts)) };
  } catch (err) {
    rethrowIfAborted(opts.signal);
    if (err instanceof BlockedUrlError) {
      const { reason, message, address, addressClass } = err;
      const detail = { ...(address ? { address } : {}), ...(addressClass ? { addressClass } : {}) };
      return {
        kind: 'result',
        result: { kind: 'blocked', reason, message, ...detail, ...base(chain, url, {}) },
      };
    }
    return {
      kind: 'result',
      result: { kind: 'network-error', ...networkError(err), ...base(chain, url, {}) },
    };
  }
}

function guardOptions(opts: ResolvedFetchOptions): Parameters<typeof checkUrl>[1] {
  return {
    allowHosts: opts.allowHosts,
    resolveTimeoutMs: opts.connectTimeoutMs,
    ...(opts.resolve ? { resolve: opts.resolve } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
  };
}

/**
 * One request to the guard's checked addresses only, on the origin's kept connection when there is one
 * (`OriginConnections`: pinned to those addresses too).
 */
async function fetchHop(
  current: string,
  target: CheckedTarget,
  opts: ResolvedFetchOptions,
  chain: Chain,
): Promise<HopOutcome> {
  const result = (r: FetchPageResult): HopOutcome => ({ kind: 'result', result: r });
  const connections = opts.connections ?? originConnections;
  let lease = connections.lease(target, opts.connectTimeoutMs);
  let response: Dispatcher.ResponseData;
  for (;;) {
    try {
      response = await lease.client.request({
        method: 'GET',
        path: `${target.url.pathname}${target.url.search}`,
        headers: requestHeaders(opts),
        // undici enforces these on a coarse timer wheel (about 0.5-1 s late at worst). bodyTimeout is
        // undici's idle timeout; readBody adds the total-time limit on top.
        headersTimeout: opts.headersTimeoutMs,
        bodyTimeout: opts.bodyTimeoutMs,
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
      break;
    } catch (err) {
      lease.release(false);
      rethrowIfAborted(opts.signal);
      // A kept connection the server closed while it sat idle fails before any answer: the request
      // is sent once more on a new connection, as browsers and curl do, and only then is it an error.
      // The origin's connections are not reused after that, so a server that drops reused
      // connections on purpose never gets a request twice again.
      if (lease.reused && closedUnderUs(err)) {
        connections.stopKeeping(target, opts.connectTimeoutMs);
        lease = connections.lease(target, opts.connectTimeoutMs, { fresh: true });
        continue;
      }
      return result({ kind: 'network-error', ...networkError(err), ...base(chain, current, {}) });
    }
  }
  try {
    chain.ttfbMs = performance.now() - chain.startedAtPerfMs;
    return await classify(response, current, opts, chain);
  } finally {
    // A body left unread (a redirect, an error status, a refused type, a cut) is dropped with its
    // connection, which cannot carry another request mid-body; a body read to its end frees it.
    const readToEnd = response.body.readableEnded;
    if (!readToEnd) {
      response.body.on('error', () => {});
      response.body.destroy();
    }
    lease.release(readToEnd);
  }
}

/** Turns a response into a redirect to follow or a final result; reads the body only for an accepted 2xx. */
async function classify(
  response: Dispatcher.ResponseData,
  current: string,
  opts: ResolvedFetchOptions,
  chain: Chain,
): Promise<HopOutcome> {
  const status = response.statusCode;
  const headers = selectHeaders(response.headers);
  const extra = { status, headers };
  const result = (r: FetchPageResult): HopOutcome => ({ kind: 'result', result: r });

  if (REDIRECT_STATUSES.has(status) && headers.location !== undefined) {
    const location = resolveLocation(headers.location, current);
    if (location !== undefined) return { kind: 'redirect', location, status, headers };
  }
  if (status === 304) return result({ ...base(chain, current, extra), kind: 'not-modified', status: 304 });
  if (status < 200 || status >= 300) {
    const retryAfter = headers['retry-after'] !== undefined ? { retryAfter: headers['retry-after'] } : {};
    return result({ kind: 'http-error', status, ...retryAfter, ...base(chain, current, extra) });
  }

  const contentType = mediaTypeOf(headers['content-type']);
  const accepted = opts.acceptResponse
    ? opts.acceptResponse(contentType, current)
    : isAllowedContentType(headers['content-type'], opts.allowedContentTypes);
  // Refused here, on the headers: the body is never read, and fetchHop drops it with its connection.
  if (!accepted) {
    const type = contentType ? { contentType } : {};
    return result({ kind: 'unsupported-content-type', status, ...type, ...base(chain, current, extra) });
  }
  const encodings = parseContentEncoding(headers['content-encoding']);
  const badEncoding = unsupportedEncoding(encodings);
  if (badEncoding !== undefined) {
    return result({
      kind: 'unsupported-content-type',
      status,
      ...(contentType ? { contentType } : {}),
      contentEncoding: badEncoding,
      ...base(chain, current, extra),
    });
  }
  const limitBytes = opts.maxBodyBytes;
  const declaredLength = Number(headers['content-length'] ?? Number.NaN);
  if (Number.isFinite(declaredLength) && declaredLength > limitBytes && !opts.truncateBody) {
    return result({ kind: 'too-large', status, limitBytes, ...base(chain, current, extra) });
  }

  const progress: BodyProgress = { wireBytes: 0, bytes: 0 };
  let body: Buffer;
  try {
    body = await readBody(
      response.body,
      {
        maxBodyBytes: limitBytes,
        bodyTimeoutMs: opts.bodyTimeoutMs,
        encodings,
        truncate: opts.truncateBody,
        ...(opts.signal ? { signal: opts.signal } : {}),
      },
      progress,
    );
  } catch (err) {
    rethrowIfAborted(opts.signal);
    const read = { ...extra, ...progress };
    if (err instanceof BodyTooLargeError) {
      return result({ kind: 'too-large', status, limitBytes, ...base(chain, current, read) });
    }
    return result({ kind: 'network-error', ...networkError(err), ...base(chain, current, read) });
  }
  const decoded = decodeBody(body, headers['content-type']);
  return result({
    kind: 'ok',
    status,
    body,
    text: decoded.text,
    charset: decoded.charset,
    contentType: contentType ?? '',
    ...(progress.truncated ? { truncated: true } : {}),
    ...base(chain, current, { ...extra, wireBytes: progress.wireBytes, bytes: progress.bytes }),
  });
}

function requestHeaders(opts: ResolvedFetchOptions): Record<string, string> {
  const headers: Record<string, string> = {
    ...opts.extraHeaders,
    'user-agent': opts.userAgent,
    accept: ACCEPT_HEADER,
    'accept-encoding': ACCEPT_ENCODING_HEADER,
  };
  if (opts.ifNoneMatch !== undefined) headers['if-none-match'] = opts.ifNoneMatch;
  if (opts.ifModifiedSince !== undefined) headers['if-modified-since'] = opts.ifModifiedSince;
  return headers;
}

function selectHeaders(raw: Record<string, string | string[] | undefined>): SelectedHeaders {
  const selected: SelectedHeaders = {};
  for (const name of SELECTED_HEADERS) {
    const value = raw[name];
    if (value !== undefined) selected[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return selected;
}

/** Resolves a Location against the URL that sent it; drops the fragment (never sent to servers). */
function resolveLocation(location: string, current: string): string | undefined {
  try {
    return withoutHash(new URL(location, current).href);
  } catch {
    return undefined;
  }
}

function withoutHash(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.hash = '';
    return parsed.href;
  } catch {
    return url;
  }
}

function base(
  chain: Chain,
  finalUrl: string,
  extra: { status?: number; headers?: SelectedHeaders; bytes?: number; wireBytes?: number },
): FetchResultBase {
  const totalMs = performance.now() - chain.startedAtPerfMs;
  return {
    requestedUrl: chain.requestedUrl,
    finalUrl,
    redirects: [...chain.redirects],
    ...(chain.firstRedirectStatus !== undefined ? { redirectStatus: chain.firstRedirectStatus } : {}),
    ...(extra.status !== undefined ? { status: extra.status } : {}),
    headers: extra.headers ?? {},
    timings: {
      startedAtMs: chain.startedAtMs,
      ...(chain.ttfbMs !== undefined ? { ttfbMs: Math.round(chain.ttfbMs) } : {}),
      totalMs: Math.round(totalMs),
    },
    bytes: extra.bytes ?? 0,
    wireBytes: extra.wireBytes ?? 0,
  };
}

function rethrowIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason;
}

const UNDICI_TIMEOUTS: Readonly<Record<string, TimeoutPhase>> = {
  UND_ERR_CONNECT_TIMEOUT: 'connect',
  UND_ERR_HEADERS_TIMEOUT: 'headers',
  UND_ERR_BODY_TIMEOUT: 'body',
};

/** Errors of a socket the other side closed or reset, not of a timeout or a refused connect. */
const CLOSED_SOCKET_CODES = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);

function closedUnderUs(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && CLOSED_SOCKET_CODES.has(code);
}

/** Maps a thrown error to the network-error fields; timeouts get code ETIMEDOUT and their phase. */
function networkError(err: unknown): { code: string; message: string; timeout?: TimeoutPhase } {
  if (err instanceof FetchTimeoutError)
    return { code: 'ETIMEDOUT', message: err.message, timeout: err.phase };
  const error = err instanceof Error ? err : new Error(String(err));
  const nested =
    error instanceof AggregateError ? (error.errors[0] as { code?: unknown } | undefined) : undefined;
  const rawCode = (error as { code?: unknown }).code ?? nested?.code;
  const code = typeof rawCode === 'string' ? rawCode : 'UNKNOWN';
  const message = error.message || (error instanceof AggregateError ? String(error.errors[0]) : code);
  const phase = UNDICI_TIMEOUTS[code];
  return phase ? { code: 'ETIMEDOUT', message, timeout: phase } : { code, message };
}
