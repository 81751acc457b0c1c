import type { ContentTypeName } from '../../domain/crawl-spec.ts';
import { type SniffedDocumentType, sniffDocumentType } from '../../domain/document-sniff.ts';
import { isUnknownMediaType, sniffsAsHtml } from '../../domain/html-sniff.ts';
import { looksBinary } from '../../extract/binary-content.ts';
import { DOCX_MIME, documentTypeOf } from '../../extract/documents/document-type.ts';
import { InvalidFetchOptionsError } from './errors.ts';
import type { FetchPageResult } from './fetch-result.ts';
import type { OriginConnections } from './origin-connections.ts';
import type { Resolver } from './ssrf-guard.ts';

/** Options of one `fetchPage` call. Defaults live in `DEFAULT_FETCH_OPTIONS` only. */
export interface FetchPageOptions {
  /** Sent on every request; should name the crawler and a contact URL. */
  userAgent: string;
  /** Hosts or IPs the SSRF guard may fetch even when they resolve to non-public addresses. */
  allowHosts: readonly string[];
  /** Time to resolve the name and open the connection (TCP + TLS). @default 10_000 */
  connectTimeoutMs?: number;
  /** Time from sending the request to receiving the complete response headers. @default 15_000 */
  headersTimeoutMs?: number;
  /** Total time for the whole body to arrive, not an idle timeout. @default 30_000 */
  bodyTimeoutMs?: number;
  /** Redirects followed before giving up with `redirect-limit`. @default 5 */
  maxRedirects?: number;
  /** Cap on the body, applied to the bytes on the wire and to the decompressed bytes. @default 10 MiB */
  maxBodyBytes?: number;
  /**
   * What a body over `maxBodyBytes` becomes: `false` a `too-large` result, `true` an `ok` result
   * holding its first `maxBodyBytes` bytes (marked `truncated`). @default false
   */
  truncateBody?: boolean;
  /** Media types accepted for a 2xx body; `type/*` and `*\/*` wildcards allowed. @default ['text/html', 'application/xhtml+xml'] */
  allowedContentTypes?: readonly string[];
  /**
   * Decides instead of `allowedContentTypes` whether a 2xx body is read, from its media type
   * (parameters dropped; undefined when missing or malformed) and the URL that answered: `false`
   * makes the response `unsupported-content-type` before a byte of its body is read. For a choice
   * the media type alone cannot make (a `.md` file served as `text/plain` or octet-stream).
   */
  acceptResponse?: (mediaType: string | undefined, finalUrl: string) => boolean;
  /** Sent as `If-None-Match` (on every hop). */
  ifNoneMatch?: string;
  /** Sent as `If-Modified-Since` (on every hop). */
  ifModifiedSince?: string;
  /** Aborting rejects `fetchPage` with the signal's reason (Temporal cancellation). */
  signal?: AbortSignal;
  /** More request headers (e.g. `accept-language`); may not replace the ones this module sets. */
  extraHeaders?: Readonly<Record<string, string>>;
  /** Name resolution, injectable for tests and custom DNS. @default systemResolver */
  resolve?: Resolver;
  /** Where connections are kept between requests to an origin. @default the process's shared `originConnections` */
  connections?: OriginConnections;
  /**
   * Asked before each redirect is followed, with the absolute target: `false` stops the chain with
   * a `redirect-limit` result of reason `refused` and the target is never requested. The crawler
   * checks robots.txt here: the guard checks addresses, not a site's rules.
   */
  beforeRedirect?: (location: string) => Promise<boolean>;
}

export type ResolvedFetchOptions = Required<
  Omit<
    FetchPageOptions,
    | 'ifNoneMatch'
    | 'ifModifiedSince'
    | 'signal'
    | 'extraHeaders'
    | 'resolve'
    | 'connections'
    | 'beforeRedirect'
    | 'acceptResponse'
  >
> &
  Pick<
    FetchPageOptions,
    | 'ifNoneMatch'
    | 'ifModifiedSince'
    | 'signal'
    | 'resolve'
    | 'connections'
    | 'beforeRedirect'
    | 'acceptResponse'
  > & {
    extraHeaders: Readonly<Record<string, string>>;
  };

export const DEFAULT_FETCH_OPTIONS = Object.freeze({
  connectTimeoutMs: 10_000,
  headersTimeoutMs: 15_000,
  bodyTimeoutMs: 30_000,
  maxRedirects: 5,
  maxBodyBytes: 10 * 1024 * 1024,
  truncateBody: false,
  allowedContentTypes: Object.freeze(['text/html', 'application/xhtml+xml']) as readonly string[],
});

/** Headers this module owns; `extraHeaders` may not set them. */
const RESERVED_HEADERS = new Set([
  'host',
  'user-agent',
  'accept',
  'accept-encoding',
  'if-none-match',
  'if-modified-since',
  'connection',
  'content-length',
  'transfer-encoding',
  'keep-alive',
  'upgrade',
  'te',
]);

/** Fills defaults and validates; throws `InvalidFetchOptionsError` on a bad value. */
export function mergeFetchOptions(options: FetchPageOptions): ResolvedFetchOptions {
  const merged: ResolvedFetchOptions = {
    ...DEFAULT_FETCH_OPTIONS,
    ...definedOnly(options),
    userAgent: options.userAgent,
    allowHosts: options.allowHosts ?? [],
    extraHeaders: lowerCaseKeys(options.extraHeaders ?? {}),
  };
  if (typeof merged.userAgent !== 'string' || merged.userAgent.trim() === '') {
    throw new InvalidFetchOptionsError('userAgent', 'must be a non-empty string');
  }
  for (const field of ['connectTimeoutMs', 'headersTimeoutMs', 'bodyTimeoutMs', 'maxBodyBytes'] as const) {
    const value = merged[field];
    if (!Number.isSafeInteger(value) || value <= 0) {
      throw new InvalidFetchOptionsError(field, `must be a positive integer, got ${value}`);
    }
  }
  if (!Number.isSafeInteger(merged.maxRedirects) || merged.maxRedirects < 0) {
    throw new InvalidFetchOptionsError('maxRedirects', `must be an integer >= 0, got ${merged.maxRedirects}`);
  }
  if (
    merged.allowedContentTypes.length === 0 ||
    merged.allowedContentTypes.some((t) => !/^[^/\s]+\/[^/\s]+$/.test(t))
  ) {
    throw new InvalidFetchOptionsError('allowedContentTypes', 'must be a non-empty list of type/subtype');
  }
  const headerValues: Record<string, string | undefined> = {
    userAgent: merged.userAgent,
    ifNoneMatch: merged.ifNoneMatch,
    ifModifiedSince: merged.ifModifiedSince,
    ...merged.extraHeaders,
  };
  for (const [field, value] of Object.entries(headerValues)) {
    if (value !== undefined && /[\r\n\0]/.test(value)) {
      throw new InvalidFetchOptionsError(field, 'header values may not contain CR, LF or NUL');
    }
  }
  for (const name of Object.keys(merged.extraHeaders)) {
    if (RESERVED_HEADERS.has(name))
      throw new InvalidFetchOptionsError('extraHeaders', `${name} is set by fetchPage`);
  }
  return merged;
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function lowerCaseKeys(headers: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}

/**
 * True when the media type of a Content-Type header matches one of the patterns. The any-type
 * pattern also takes a body whose Content-Type is missing or malformed: robots.txt and a browser's
 * subresources are read whatever the server labels them, and a robots.txt sent without a type
 * still has rules to keep.
 */
export function isAllowedContentType(header: string | undefined, patterns: readonly string[]): boolean {
  const mediaType = mediaTypeOf(header);
  if (mediaType === undefined) return patterns.includes('*/*');
  const [type, subtype] = mediaType.split('/');
  return patterns.some((pattern) => {
    const [pType, pSub] = pattern.toLowerCase().split('/');
    return (pType === '*' || pType === type) && (pSub === '*' || pSub === subtype);
  });
}

/** `text/html; charset=x` → `text/html`; undefined when absent or malformed. */
export function mediaTypeOf(header: string | undefined): string | undefined {
  const mediaType = header?.split(';')[0]?.trim().toLowerCase();
  return mediaType && /^[^/\s]+\/[^/\s]+$/.test(mediaType) ? mediaType : undefined;
}

const HTML_MEDIA_TYPES: readonly string[] = ['text/html', 'application/xhtml+xml'];
/** Media types that say only "bytes": what such a body is comes from its URL, or else its first bytes. */
const GENERIC_MEDIA_TYPES = new Set(['application/octet-stream', 'binary/octet-stream']);
/** The media type a body sniffed as a document is stored under, so every later reader takes it as one. */
const SNIFFED_MEDIA_TYPES: Readonly<Record<SniffedDocumentType, string>> = {
  pdf: 'application/pdf',
  docx: DOCX_MIME,
};

/** True for a media type that names no format: octet-stream, or none at all (missing or malformed). */
function isGenericMediaType(mediaType: string | undefined): boolean {
  const type = mediaTypeOf(mediaType);
  return type === undefined || GENERIC_MEDIA_TYPES.has(type);
}

/**
 * `fetchPage`'s `acceptResponse` for a crawl with these `contentTypes`: a response is read when its
 * media type and URL make it a kind the crawl asked for ({@link responseKindOf}), so a `.md` served
 * as text/plain or octet-stream to a crawl of HTML and PDFs is refused on its headers, its body never
 * downloaded. A generic type at a URL that says nothing (`/download?id=3`) can only be told by its
 * bytes: it is read, within the body cap, when the crawl asks for a type with a signature (PDF,
 * DOCX), and judged by {@link admitResponseKind} once it is in. So is a body with no type at all
 * when the crawl takes HTML: it may be a page, told by its first bytes as a browser tells it.
 */
export function acceptResponseFor(
  contentTypes: readonly ContentTypeName[],
): (mediaType: string | undefined, finalUrl: string) => boolean {
  const sniffable = contentTypes.some((name) => Object.hasOwn(SNIFFED_MEDIA_TYPES, name));
  const html = contentTypes.includes('html');
  return (mediaType, finalUrl) => {
    const kind = responseKindOf(mediaType, finalUrl);
    if (kind !== undefined) return contentTypes.includes(kind);
    // An untyped body may be a page, which only its first bytes can tell (see admitResponseKind).
    if (html && isUnknownMediaType(mediaTypeOf(mediaType))) return true;
    return sniffable && isGenericMediaType(mediaType);
  };
}

/** What a response is, by its media type and URL: 'html', a document type, or undefined (neither). */
export function responseKindOf(mediaType: string | undefined, url: string): ContentTypeName | undefined {
  const type = mediaTypeOf(mediaType);
  if (type && HTML_MEDIA_TYPES.includes(type)) return 'html';
  return documentTypeOf(type, url);
}

/**
 * A fetched response as the crawl takes it: one of a kind the crawl did not ask for (a `.txt` served
 * as text/plain when only Markdown is wanted, an octet-stream that is no document by its URL or its
 * bytes) becomes `unsupported-content-type`, as if `fetchPage` had refused it; so does binary data
 * served as HTML (marked `binary`), which is no page whatever its label says. A generic type at a URL
 * that says nothing is taken by its bytes (`%PDF-`, a ZIP holding `word/document.xml`) and kept under
 * that document's media type; one with no type at all that opens like HTML (`<!doctype html`, `<html`:
 * MIME Sniffing's patterns) is a page, kept as `text/html`. A PDF or DOCX cut at `--max-body-bytes`
 * becomes `too-large`: unlike HTML or text, half a binary document cannot be read at all.
 */
export function admitResponseKind(
  response: FetchPageResult,
  contentTypes: readonly ContentTypeName[],
  maxBodyBytes: number,
): FetchPageResult {
  if (response.kind !== 'ok') return response;
  const { requestedUrl, finalUrl, redirects, status, headers, timings, bytes, wireBytes } = response;
  const base = { requestedUrl, finalUrl, redirects, status, headers, timings, bytes, wireBytes };
  let fetched = response;
  let kind = responseKindOf(fetched.contentType, finalUrl);
  const sniffed =
    kind === undefined && isGenericMediaType(fetched.contentType)
      ? sniffDocumentType(fetched.body)
      : undefined;
  if (sniffed !== undefined) {
    kind = sniffed;
    // Stored under the sniffed type, the page is read as that document again on the page path
    // (which goes by `pages.content_type` and the URL, and would find neither saying so).
    fetched = { ...fetched, contentType: SNIFFED_MEDIA_TYPES[sniffed] };
  } else if (
    kind === undefined &&
    isUnknownMediaType(mediaTypeOf(fetched.contentType)) &&
    sniffsAsHtml(fetched.body)
  ) {
    // No Content-Type, but `<!doctype html>…`: a page, as a browser would render it.
    kind = 'html';
    fetched = { ...fetched, contentType: 'text/html' };
  }
  if (kind === undefined || !contentTypes.includes(kind)) {
    return {
      kind: 'unsupported-content-type',
      ...base,
      ...(response.contentType ? { contentType: response.contentType } : {}),
    };
  }
  // Checked here, before the page is stored, so it never reaches extraction, chunks or search.
  if (kind === 'html' && looksBinary(fetched.text)) {
    return { kind: 'unsupported-content-type', ...base, contentType: fetched.contentType, binary: true };
  }
  if (fetched.truncated && (kind === 'pdf' || kind === 'docx'))
    return { kind: 'too-large', ...base, limitBytes: maxBodyBytes };
  return fetched;
}
