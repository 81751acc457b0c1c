/**
 * Is an untyped body HTML? The HTML patterns of the WHATWG MIME Sniffing standard ("rules for
 * identifying an unknown MIME type"): browsers render a response sent without a Content-Type (or
 * with `unknown/unknown`, `application/unknown`, `*\/*`) as a page when it opens, after whitespace,
 * with one of these tags. Servers that forget the header (CGI scripts, hand-rolled servers, some
 * file stores) serve real pages that way.
 */

/** Media types that, like a missing header, say the server does not know (MIME Sniffing §7.1). */
const UNKNOWN_MEDIA_TYPES = new Set(['unknown/unknown', 'application/unknown', '*/*']);

/** Tags, upper-cased, each to be followed by a space or `>` (`<!--` by anything tag-terminating too). */
const HTML_PATTERNS = [
  '<!DOCTYPE HTML',
  '<HTML',
  '<HEAD',
  '<SCRIPT',
  '<IFRAME',
  '<H1',
  '<DIV',
  '<FONT',
  '<TABLE',
  '<A',
  '<STYLE',
  '<TITLE',
  '<B',
  '<BODY',
  '<BR',
  '<P',
  '<!--',
].map((pattern) => Array.from(pattern, (char) => char.charCodeAt(0)));

/** True for a media type (already lower-cased, parameters dropped) that tells nothing: absent or "unknown". */
export function isUnknownMediaType(mediaType: string | undefined): boolean {
  return mediaType === undefined || UNKNOWN_MEDIA_TYPES.has(mediaType);
}

/** True when the bytes open, after whitespace, with one of the standard's HTML tag patterns. */
export function sniffsAsHtml(bytes: Uint8Array): boolean {
  let start = 0;
  while (start < bytes.length && isWhitespace(bytes[start] as number)) start++;
  return HTML_PATTERNS.some((pattern) => matchesAt(bytes, start, pattern));
}

function matchesAt(bytes: Uint8Array, start: number, pattern: readonly number[]): boolean {
  const end = start + pattern.length;
  // The tag must end there: `<Ab` is not `<A`, `<Progress` not `<P`.
  if (end >= bytes.length) return false;
  for (let i = 0; i < pattern.length; i++) {
    const byte = bytes[start + i] as number;
    const upper = byte >= 0x61 && byte <= 0x7a ? byte - 0x20 : byte;
    if (upper !== pattern[i]) return false;
  }
  const next = bytes[end];
  return next === 0x20 || next === 0x3e;
}

function isWhitespace(byte: number): boolean {
  return byte === 0x09 || byte === 0x0a || byte === 0x0c || byte === 0x0d || byte === 0x20;
}
