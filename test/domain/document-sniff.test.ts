import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sniffDocumentType } from '../../domain/document-sniff';

const FIXTURES = path.join(import.meta.dirname, '../fixtures/documents');
const fixture = (name: string) => readFileSync(path.join(FIXTURES, name));

/** The same archive with its main part renamed: still a valid ZIP, no longer a Word document. */
function renamedMainPart(docx: Buffer): Buffer {
  const bytes = Buffer.from(docx);
  const name = Buffer.from('word/document.xml');
  for (let at = bytes.indexOf(name); at !== -1; at = bytes.indexOf(name, at + 1))
    bytes.write('word/documenx.xml', at, 'latin1');
  return bytes;
}

describe('sniffDocumentType', () => {
  it('tells a PDF by %PDF- and its version, behind a BOM or a little whitespace', () => {
    const pdf = fixture('field-guide.pdf');
    expect(sniffDocumentType(pdf)).toBe('pdf');
    expect(sniffDocumentType(Buffer.concat([Buffer.from('\ufeff'), pdf]))).toBe('pdf');
    expect(sniffDocumentType(Buffer.concat([Buffer.from(' \r\n\t\0'), pdf]))).toBe('pdf');
    // Cut short it is still a PDF by its bytes (the crawl then calls it too large, not unsupported).
    expect(sniffDocumentType(pdf.subarray(0, 100))).toBe('pdf');
  });

  it('takes no PDF header that text merely mentions, or that lacks its version', () => {
    expect(sniffDocumentType(Buffer.from('see %PDF-1.7 in the spec'))).toBeUndefined();
    expect(sniffDocumentType(Buffer.from('%PDF-'))).toBeUndefined();
    expect(sniffDocumentType(Buffer.from('%PDF-x.y\n'))).toBeUndefined();
    expect(
      sniffDocumentType(Buffer.concat([Buffer.alloc(2000, 0x20), Buffer.from('%PDF-1.4')])),
    ).toBeUndefined();
  });

  it('tells a DOCX by a ZIP central directory that lists word/document.xml', () => {
    const docx = fixture('greenhouse-handbook.docx');
    expect(sniffDocumentType(docx)).toBe('docx');
    expect(sniffDocumentType(renamedMainPart(docx))).toBeUndefined();
    // The central directory is at the end: an archive cut short cannot be told (nor read).
    expect(sniffDocumentType(docx.subarray(0, docx.length - 100))).toBeUndefined();
  });

  it('takes nothing from other bytes', () => {
    expect(sniffDocumentType(new Uint8Array())).toBeUndefined();
    expect(sniffDocumentType(Buffer.from('# Pond care\n\nTop up with rainwater.\n'))).toBeUndefined();
    expect(sniffDocumentType(Buffer.from('PK\x03\x04 no archive behind this'))).toBeUndefined();
    const noise = Uint8Array.from({ length: 70_000 }, (_, i) => (i * 131 + 7) % 256);
    expect(sniffDocumentType(noise)).toBeUndefined();
  });
});
