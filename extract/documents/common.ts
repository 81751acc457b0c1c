/** Pieces every converter shares: bytes → text, links, metadata, Markdown → plain text. */
import type { ExtractedLink } from '../../domain/links';
import { replaceImages, replaceLinksWithText } from '../../domain/markdown-inline-scan';
import { decodeWithEncoding } from '../../domain/text-decoding';
import { canonicalizeUrl } from '../../domain/url';
import { countWords } from '../candidate';
import { type PageMetadata, readingTimeMinutes } from '../metadata';

/** Bytes sampled to tell text from binary. */
const SNIFF_BYTES = 8192;
/** Share of control characters (tab, CR, LF, FF excepted) above which a body is not text. */
const MAX_CONTROL_SHARE = 0.1;

/**
 * Decodes a text body (BOM first, then `charset`, then UTF-8), or says why it is not text: a NUL
 * byte, or many control characters, in its first 8 KiB (what `file` and git look at), or mostly
 * bytes the encoding cannot read.
 * UTF-16 (by BOM or charset) is exempt from that test: half its bytes are NULs.
 *
 * A body that is not valid UTF-8 and holds no UTF-8 sequence at all was written in a legacy 8-bit
 * encoding: it is read as windows-1252 (what browsers assume for unlabelled Western text), not as a
 * page of U+FFFD. This holds for a `utf-8` charset too, since the fetch path reports `utf-8` both
 * when a server said so and when it said nothing.
 */
export type DecodedText = { ok: true; text: string } | { ok: false; message: string };

export function decodeText(bytes: Uint8Array, charset: string | undefined): DecodedText {
  const head = bytes.subarray(0, SNIFF_BYTES);
  let bom: string | undefined;
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) bom = 'utf-8';
  else if (head[0] === 0xff && head[1] === 0xfe) bom = 'utf-16le';
  else if (head[0] === 0xfe && head[1] === 0xff) bom = 'utf-16be';
  const declared = encodingOf(charset);
  const encoding = bom ?? declared ?? 'utf-8';
  if (!encoding.startsWith('utf-16')) {
    let control = 0;
    for (const byte of head) {
      if (byte === 0) return { ok: false, message: 'holds binary data (a NUL byte)' };
      if (byte < 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d && byte !== 0x0c) control++;
    }
    if (head.length > 0 && control / head.length > MAX_CONTROL_SHARE)
      return { ok: false, message: 'holds binary data (control bytes)' };
  }
  let text = decodeWithEncoding(encoding, bytes);
  if (encoding === 'utf-8' && !bom && text.includes('\ufffd') && !/[\u0080-\ufffc\ufffe\uffff]/.test(text))
    text = decodeWithEncoding('windows-1252', bytes);
  // Mostly replacement characters: binary that happened to carry no NUL in its first bytes, or text
  // in a multi-byte legacy encoding (Shift_JIS, GBK, EUC-KR) that the response did not name.
  const sample = text.slice(0, SNIFF_BYTES);
  const replaced = sample.length - sample.replaceAll('\ufffd', '').length;
  if (sample.length > 0 && replaced / sample.length > MAX_CONTROL_SHARE)
    return {
      ok: false,
      message:
        declared && declared !== 'utf-8'
          ? `is not readable as its declared ${declared}`
          : 'is not UTF-8 and names no other charset (a legacy encoding the server did not declare, or binary data)',
    };
  return { ok: true, text };
}

/** A charset label's WHATWG encoding name; undefined for none or an unknown label (then UTF-8 is read). */
function encodingOf(label: string | undefined): string | undefined {
  if (!label) return undefined;
  try {
    const { encoding } = new TextDecoder(label.trim());
    return encoding === 'replacement' ? undefined : encoding;
  } catch {
    return undefined;
  }
}

/** Links kept per document, as for HTML (`domain/links.ts`). */
export const MAX_DOCUMENT_LINKS = 10_000;
const MAX_ANCHOR_CHARS = 500;

/** Resolves, canonicalises and de-duplicates links (first of each url + anchor pair), skipping non-http ones. */
export function collectLinks(
  found: Iterable<{ href: string; text: string }>,
  base: string | undefined,
): ExtractedLink[] {
  const seen = new Set<string>();
  const links: ExtractedLink[] = [];
  for (const { href, text } of found) {
    if (links.length >= MAX_DOCUMENT_LINKS) break;
    const url = canonicalizeUrl(href, base);
    if (url === null) continue;
    const anchorText = text.replace(/\s+/g, ' ').trim().slice(0, MAX_ANCHOR_CHARS);
    const key = `${url}\n${anchorText}`;
    if (seen.has(key)) continue;
    seen.add(key);
    links.push({ url, anchorText, rel: '', nofollow: false, tag: 'a' });
  }
  return links;
}

/** PageMetadata for a document: what it declares, with counts from its text. */
export function documentMetadata(declared: Partial<PageMetadata>, text: string): PageMetadata {
  const wordCount = countWords(text);
  const metadata: PageMetadata = {
    ...declared,
    contentType: declared.contentType ?? 'document',
    wordCount,
    readingTimeMinutes: readingTimeMinutes(wordCount),
  };
  for (const key of Object.keys(metadata) as (keyof PageMetadata)[]) {
    if (metadata[key] === undefined) delete metadata[key];
  }
  return metadata;
}

const TABLE_ROW = /^\s*\|.*\|\s*$/;
const TABLE_DELIMITER_ROW = /^\s*\|(?:\s*:?-+:?\s*\|)+\s*$/;

/**
 * Reading text of normalised Markdown: heading marks, link and image syntax and fences dropped, a
 * table's rows read as their cells (no pipes, no delimiter row, no empty header).
 */
export function markdownToText(markdown: string): string {
  const lines: string[] = [];
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) continue;
    if (TABLE_ROW.test(line)) {
      if (TABLE_DELIMITER_ROW.test(line)) continue;
      const cells = line
        .trim()
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim().replace(/\\\|/g, '|'))
        .filter((cell) => cell !== '');
      if (cells.length > 0) lines.push(cells.join(' '));
      continue;
    }
    lines.push(line.replace(/^#{1,6}\s+/, '').replace(/^\\(?=[#=\-+>])/, ''));
  }
  return replaceLinksWithText(replaceImages(lines.join('\n'), ''), true)
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** First line of `text` as a title when it is short enough to be one. */
export function shortFirstLine(text: string, maxChars = 120): string | undefined {
  const first = text
    .split('\n')
    .find((line) => line.trim() !== '')
    ?.trim();
  return first && first.length <= maxChars ? first : undefined;
}

/**
 * A document's file name without its extension ("orchard-manual.docx" → "orchard-manual"): a heading
 * over its chapters when it declares no title. Undefined when the URL names no file.
 */
export function documentName(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const segment = new URL(url).pathname.split('/').pop() ?? '';
    // A name without an extension (`/download?id=3`) is a route, not the document's name.
    const named = /^(.+)\.[a-z0-9]{1,5}$/i.exec(decodeURIComponent(segment));
    const name = named?.[1]?.trim();
    return name && /\p{L}/u.test(name) ? name : undefined;
  } catch {
    return undefined;
  }
}
