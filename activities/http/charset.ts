/**
 * Body bytes → text. The encoding comes from, in order: a byte-order mark, the Content-Type charset, a
 * `<meta>` declaration in the first 1024 bytes, else UTF-8. The BOM goes first as in the HTML standard's
 * encoding sniffing (and browsers): a BOM is unambiguous, a header label is often stale.
 * Decoding uses WHATWG `TextDecoder` (full ICU: windows-1252, iso-8859-x, shift_jis, euc-kr, gbk...),
 * never throws, and replaces invalid sequences with U+FFFD.
 */

export interface DecodedBody {
  readonly text: string;
  /** WHATWG name of the encoding used, e.g. `utf-8`, `windows-1252`, `shift_jis`. */
  readonly charset: string;
  readonly source: 'bom' | 'header' | 'meta' | 'default';
}

const META_SNIFF_BYTES = 1024;

/**
 * Node 20's TextDecoder decodes `windows-1252` (and so `iso-8859-1`, `latin1`, `ascii`) as ISO-8859-1,
 * turning 0x80-0x9F into C1 controls instead of € ‚ ƒ „ … ’ “ ” – — ™ and friends. Checked once at load;
 * when the runtime is right, the native decoder is used.
 */
const NATIVE_WINDOWS_1252_OK = new TextDecoder('windows-1252').decode(Uint8Array.of(0x80)) === '\u20ac';

/** Code points of bytes 0x80-0x9F in windows-1252 (WHATWG index; unassigned bytes map to U+0080-U+009F). */
const WINDOWS_1252_HIGH = [
  0x20ac, 0x0081, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021, 0x02c6, 0x2030, 0x0160, 0x2039, 0x0152,
  0x008d, 0x017d, 0x008f, 0x0090, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x02dc, 0x2122,
  0x0161, 0x203a, 0x0153, 0x009d, 0x017e, 0x0178,
];

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
  if (encoding === 'windows-1252' && !NATIVE_WINDOWS_1252_OK) return decodeWindows1252(bytes);
  try {
    // TextDecoder skips a BOM matching the encoding; fatal: false replaces invalid sequences.
    return new TextDecoder(encoding, { fatal: false }).decode(bytes);
  } catch {
    return new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  }
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

function decodeWindows1252(bytes: Buffer): string {
  return bytes
    .toString('latin1')
    .replace(/[\u0080-\u009f]/g, (c) =>
      String.fromCharCode(WINDOWS_1252_HIGH[c.charCodeAt(0) - 0x80] ?? c.charCodeAt(0)),
    );
}
