/**
 * A DOCX's own title and author: its core properties (`docProps/core.xml`, OPC Part 2 §11), which
 * mammoth does not read. The archive's sizes are checked before this runs (`docx.ts`); the part is
 * small, and one declaring more than {@link MAX_CORE_BYTES} is not read.
 */
import { inflateRawSync } from 'node:zlib';
import type { ZipEntry } from '../../domain/zip-entries';

const CORE_PART = 'docProps/core.xml';
const MAX_CORE_BYTES = 256 * 1024;
const LOCAL_HEADER_BYTES = 30;

export interface CoreProperties {
  title?: string;
  author?: string;
}

export function coreProperties(bytes: Uint8Array, entries: readonly ZipEntry[]): CoreProperties {
  const xml = partText(bytes, entries, CORE_PART);
  if (xml === undefined) return {};
  return { title: elementText(xml, 'dc:title'), author: elementText(xml, 'dc:creator') };
}

function partText(bytes: Uint8Array, entries: readonly ZipEntry[], name: string): string | undefined {
  const entry = entries.find((candidate) => candidate.name === name);
  if (!entry || entry.uncompressedBytes > MAX_CORE_BYTES || (entry.method !== 0 && entry.method !== 8))
    return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const at = entry.localHeaderOffset;
  if (at + LOCAL_HEADER_BYTES > bytes.length) return undefined;
  const start = at + LOCAL_HEADER_BYTES + view.getUint16(at + 26, true) + view.getUint16(at + 28, true);
  const data = bytes.subarray(start, start + entry.compressedBytes);
  try {
    const raw = entry.method === 0 ? data : inflateRawSync(data, { maxOutputLength: MAX_CORE_BYTES });
    return new TextDecoder().decode(raw);
  } catch {
    // A damaged properties part costs the title, not the document.
    return undefined;
  }
}

const XML_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** The text of the first `<name>` element, entities decoded, blanks collapsed; undefined when empty. */
function elementText(xml: string, name: string): string | undefined {
  const match = new RegExp(`<${name}(?:\\s[^>]*)?>([^<]*)</${name}>`).exec(xml);
  const text = match?.[1]
    ?.replace(/&(#x[0-9a-fA-F]{1,6}|#\d{1,7}|[a-z]{2,4});/g, (whole, body: string) => {
      if (!body.startsWith('#')) return XML_ENTITIES[body] ?? whole;
      const code = body[1] === 'x' ? Number.parseInt(body.slice(2), 16) : Number(body.slice(1));
      return code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff)
        ? String.fromCodePoint(code)
        : '';
    })
    .replace(/\s+/g, ' ')
    .trim();
  return text || undefined;
}
