/**
 * Body bytes → text. The encoding comes from, in order: a byte-order mark, the Content-Type charset, a
 * `<meta>` declaration in the first 1024 bytes, else UTF-8. The BOM goes first as in the HTML standard's
 * encoding sniffing (and browsers): a BOM is unambiguous, a header label is often stale.
 * Decoding uses WHATWG `TextDecoder` (full ICU: windows-1252, iso-8859-x, shift_jis, euc-kr, gbk...),
 * never throws, and replaces invalid sequences with U+FFFD.
 */

import { decodeWithEncoding } from '../../domain/text-decoding.ts';

export interface DecodedBody {
  readonly text: string;
  /** WHATWG name of the encoding used, e.g. `utf-8`, `windows-1252`, `shift_jis`. */
  readonly charset: string;
  readonly source: 'bom' | 'header' | 'meta' | 'default';
}

const META_SNIFF_BYTES = 1024;

export function decodeBody(bytes: Buffer, contentTypeHeader?: string): DecodedBody {
  const bom = sniffBom(bytes);
  if (bom !== undefined) return { text: decodeWith(bom, bytes), charset: bom, source: 'bom' };

  const fromHeader = resolveLabel(charsetFromContentType(contentTypeHeader));
  if (fromHeader !== undefined)
    return { text: decodeWith(fromHeader, bytes), charset: fromHeader, source: 'header' };

  let fromMeta = resolveLabel(sniffMetaCharset(bytes));
  if (fromMeta !== undefined) {
    // HTML standard: a meta tag readable as ASCII cannot really mean UTF-16; x-user-defined means windows-1252.
    if (fromMeta.startsWith('utf-16')) fromMeta = 'utf-8';
    if (fromMeta === 'x-user-defined') fromMeta = 'windows-1252';
    return { text: decodeWith(fromMeta, bytes), charset: fromMeta, source: 'meta' };
  }
  return { text: decodeWith('utf-8', bytes), charset: 'utf-8', source: 'default' };
}

function sniffBom(bytes: Buffer): string | undefined {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  return undefined;
}

/** The `charset` parameter of a Content-Type header, unquoted. */
export function charsetFromContentType(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i.exec(header);
  const label = match?.[1] ?? match?.[2];
  return label ? label.trim() : undefined;
}

/** A label's canonical WHATWG encoding name, or undefined when the label is unknown (or `replacement`). */
export function resolveLabel(label: string | undefined): string | undefined {
  if (label === undefined || label === '') return undefined;
  try {
    const encoding = new TextDecoder(label).encoding;
    return encoding === 'replacement' ? undefined : encoding;
  } catch {
    return undefined;
  }
}

function decodeWith(encoding: string, bytes: Buffer): string {
  return decodeWithEncoding(encoding, bytes);
}

/**
 * A simplified form of the HTML standard's prescan: looks at `<meta>` tags in the first 1024 bytes (read as
 * Latin-1, which keeps ASCII intact) for `charset=` or `http-equiv=content-type` with a charset in `content`.
 */
export function sniffMetaCharset(bytes: Buffer): string | undefined {
  const head = bytes
    .subarray(0, META_SNIFF_BYTES)
    .toString('latin1')
    .replace(/<!--[\s\S]*?(?:-->|$)/g, '');
  for (const tag of head.matchAll(/<meta[\s/][^>]*>?/gi)) {
    const attrs = parseAttributes(tag[0].slice(5));
    const charset = attrs.get('charset');
    if (charset !== undefined && charset.trim() !== '') return charset.trim();
    if (attrs.get('http-equiv')?.trim().toLowerCase() === 'content-type') {
      const content = attrs.get('content');
      const match = content === undefined ? null : /charset\s*=\s*["']?([^"';\s]+)/i.exec(content);
      if (match?.[1]) return match[1];
    }
  }
  return undefined;
}

function parseAttributes(text: string): Map<string, string> {
  const attrs = new Map<string, string>();
  for (const m of text.matchAll(/([^\s=/>]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g)) {
    const name = (m[1] ?? '').toLowerCase();
    // First occurrence wins, as in the HTML tokenizer.
    if (!attrs.has(name)) attrs.set(name, m[2] ?? m[3] ?? m[4] ?? '');
  }
  return attrs;
}
