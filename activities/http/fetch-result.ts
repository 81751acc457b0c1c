import type { AddressClass } from '../../domain/ip-policy.ts';
import type { BlockReason, TimeoutPhase } from './errors.ts';

/** Response headers kept in a result (lower-case names; repeated headers joined with ", "). */
export const SELECTED_HEADERS = [
  'content-type',
  'etag',
  'last-modified',
  'retry-after',
  'x-robots-tag',
  'content-length',
  'location',
  'content-language',
  'content-encoding',
  'cache-control',
] as const;

export type SelectedHeaderName = (typeof SELECTED_HEADERS)[number];
export type SelectedHeaders = Partial<Record<SelectedHeaderName, string>>;

export interface FetchTimings {
  /** Wall-clock start, ms since the epoch. */
  readonly startedAtMs: number;
  /** From start to the headers of the last response received (redirect hops included). */
  readonly ttfbMs?: number;
  readonly totalMs: number;
}

/** Fields every result carries. */
export interface FetchResultBase {
  readonly requestedUrl: string;
  /** The last URL requested, or refused by the guard. Equal to `requestedUrl` when there was no redirect. */
  readonly finalUrl: string;
  /** Every URL that answered with a redirect, in order (the chain before `finalUrl`). */
  readonly redirects: string[];
  /** Status of the first redirect (301, 302, 303, 307, 308), when there was one. */
  readonly redirectStatus?: number;
  /** Status of the last response, when there was one. */
  readonly status?: number;
  /** Selected headers of the last response. */
  readonly headers: SelectedHeaders;
  readonly timings: FetchTimings;
  /** Body bytes after decompression that were accepted (never more than one chunk past the cap). */
  readonly bytes: number;
  /** Body bytes read from the connection before decompression; for `too-large`, where reading stopped. */
  readonly wireBytes: number;
}

export interface FetchOk extends FetchResultBase {
  readonly kind: 'ok';
  readonly status: number;
  /** Decompressed body bytes, not yet decoded to text. */
  readonly body: Buffer;
  readonly text: string;
  /** The encoding `text` was decoded with. */
  readonly charset: string;
  /** Media type without parameters, e.g. `text/html`; empty when an any-type fetch got none. */
  readonly contentType: string;
  /** Set when the body was cut at `maxBodyBytes` (with `truncateBody`). */
  readonly truncated?: boolean;
}

export interface FetchNotModified extends FetchResultBase {
  readonly kind: 'not-modified';
  readonly status: 304;
}

/** Any other non-2xx final status: 4xx, 5xx, and 3xx that cannot be followed (no usable Location, 300...). */
export interface FetchHttpError extends FetchResultBase {
  readonly kind: 'http-error';
  readonly status: number;
  /** Raw Retry-After value (seconds or HTTP date), for the caller to turn into a retry delay. */
  readonly retryAfter?: string;
}

export interface FetchBlocked extends FetchResultBase {
  readonly kind: 'blocked';
  readonly reason: BlockReason;
  readonly message: string;
  readonly address?: string;
  readonly addressClass?: AddressClass;
}

export interface FetchUnsupportedContentType extends FetchResultBase {
  readonly kind: 'unsupported-content-type';
  readonly status: number;
  /** Media type received; undefined when the header was missing. */
  readonly contentType?: string;
  /**
   * Set when the media type was fine but the Content-Encoding cannot be decoded: the unknown coding
   * (`zstd`), or `chain of N codings (at most 2)` for a chain longer than `MAX_CONTENT_CODINGS`.
   */
  readonly contentEncoding?: string;
  /** Set when the media type was HTML but the body is binary data (`looksBinary`), refused by the crawl. */
  readonly binary?: true;
}

export interface FetchTooLarge extends FetchResultBase {
  readonly kind: 'too-large';
  readonly status: number;
  readonly limitBytes: number;
}

export interface FetchRedirectLimit extends FetchResultBase {
  readonly kind: 'redirect-limit';
  /**
   * `loop`: the next URL was already visited in this chain; `too-many`: more than `maxRedirects`;
   * `refused`: the caller's `beforeRedirect` said no (robots.txt disallows the target).
   */
  readonly reason: 'loop' | 'too-many' | 'refused';
  /** Where the last redirect pointed (resolved, absolute). */
  readonly location: string;
}

export interface FetchNetworkError extends FetchResultBase {
  readonly kind: 'network-error';
  /** `ETIMEDOUT` for timeouts, else the underlying code: `ENOTFOUND`, `ECONNREFUSED`, `UND_ERR_SOCKET`... */
  readonly code: string;
  readonly message: string;
  readonly timeout?: TimeoutPhase;
}

export type FetchPageResult =
  | FetchOk
  | FetchNotModified
  | FetchHttpError
  | FetchBlocked
  | FetchUnsupportedContentType
  | FetchTooLarge
  | FetchRedirectLimit
  | FetchNetworkError;

export type FetchResultKind = FetchPageResult['kind'];
