/**
 * What document a body is by its first bytes, for a response whose media type says only "bytes"
 * (`application/octet-stream`, or none) at a URL with no extension to go by (`/download?id=3`):
 * file stores and CMS download handlers serve PDFs and Word files that way.
 */
import { zipEntries } from './zip-entries';

/** The document types a body can be told by its bytes; HTML, Markdown and text carry no signature. */
export type SniffedDocumentType = 'pdf' | 'docx';

/**
 * Bytes a PDF header may sit behind. Readers look for `%PDF-` in the first 1,024 bytes (the same
 * window `extract/documents/pdf.ts` checks); only whitespace and a BOM are skipped here, since a
 * body that merely mentions `%PDF-` in its first kilobyte is no PDF.
 */
const PDF_HEADER_WINDOW = 1024;
const PDF_HEADER = [0x25, 0x50, 0x44, 0x46, 0x2d]; // %PDF-
const ZIP_LOCAL_HEADER = 0x04034b50; // PK\x03\x04
/** The part every WordprocessingML package has; mammoth reads the text from it. */
const DOCX_MAIN_PART = 'word/document.xml';

/** `pdf` or `docx` when the bytes carry that format's signature; undefined otherwise. */
export function sniffDocumentType(bytes: Uint8Array): SniffedDocumentType | undefined {
  if (hasPdfHeader(bytes)) return 'pdf';
  if (isDocx(bytes)) return 'docx';
  return undefined;
}

/** `%PDF-` and a version digit, after an optional UTF-8 BOM and PDF whitespace (ISO 32000 §7.2.2). */
function hasPdfHeader(bytes: Uint8Array): boolean {
  let at = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  const end = Math.min(bytes.length, PDF_HEADER_WINDOW);
  while (at < end && isPdfWhitespace(bytes[at] ?? -1)) at++;
  if (at + PDF_HEADER.length >= bytes.length) return false;
  if (!PDF_HEADER.every((byte, i) => bytes[at + i] === byte)) return false;
  const version = bytes[at + PDF_HEADER.length] ?? -1;
  return version >= 0x30 && version <= 0x39;
}

function isPdfWhitespace(byte: number): boolean {
  return byte === 0x00 || byte === 0x09 || byte === 0x0a || byte === 0x0c || byte === 0x0d || byte === 0x20;
}

/**
 * A ZIP archive whose central directory lists `word/document.xml` (`zip-entries.ts` reads it). An
 * archive cut short (its directory is at the end), or one whose directory cannot be trusted, is no
 * DOCX here.
 */
function isDocx(bytes: Uint8Array): boolean {
  if (bytes.length < 30) return false;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(0, true) !== ZIP_LOCAL_HEADER) return false;
  const listing = zipEntries(bytes);
  return listing.ok && listing.entries.some((entry) => entry.name === DOCX_MAIN_PART);
}
