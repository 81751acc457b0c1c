import { readFileSync } from 'node:fs';
import path from 'node:path';
import { deflateRawSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { zipEntries } from '../../domain/zip-entries';
import { zip } from '../../testbed/zip-archive';

const FILES = {
  '[Content_Types].xml': '<Types/>',
  'word/document.xml': `<w:document>${'<w:p>pond care</w:p>'.repeat(50)}</w:document>`,
};
const WHOLE = zip(FILES);

describe('zipEntries', () => {
  it('lists each entry with the sizes its central header declares', () => {
    const document = FILES['word/document.xml'];
    expect(zipEntries(WHOLE)).toEqual({
      ok: true,
      entries: [
        {
          name: '[Content_Types].xml',
          compressedBytes: deflateRawSync('<Types/>').length,
          uncompressedBytes: 8,
          method: 8,
          localHeaderOffset: 0,
        },
        {
          name: 'word/document.xml',
          compressedBytes: deflateRawSync(document).length,
          uncompressedBytes: document.length,
          method: 8,
          localHeaderOffset: 30 + '[Content_Types].xml'.length + deflateRawSync('<Types/>').length,
        },
      ],
    });
  });

  it('lists a real DOCX (written by pandoc, test/fixtures/documents/src/make.sh)', () => {
    const docx = readFileSync(
      path.join(import.meta.dirname, '../fixtures/documents/greenhouse-handbook.docx'),
    );
    const listing = zipEntries(docx);
    if (!listing.ok) throw new Error(listing.detail);
    expect(listing.entries.map((entry) => entry.name)).toEqual(
      expect.arrayContaining(['[Content_Types].xml', 'word/document.xml']),
    );
    for (const entry of listing.entries) expect(entry.compressedBytes).toBeLessThan(docx.length);
  });

  it('decodes names as UTF-8 and lists an empty archive as empty', () => {
    const listing = zipEntries(zip({ 'notes/wöchentlich.txt': 'x' }));
    expect(listing.ok && listing.entries[0]?.name).toBe('notes/wöchentlich.txt');
    // A byte-order mark is part of the name, not dropped: no other name reads as word/document.xml.
    const marked = zipEntries(zip({ '\ufeffword/document.xml': 'x' }));
    expect(marked.ok && marked.entries[0]?.name).toBe('\ufeffword/document.xml');
    expect(zipEntries(zip({}))).toEqual({ ok: true, entries: [] });
  });

  it('finds the end record behind a comment, up to the longest a comment can be', () => {
    for (const length of [1, 1000, 0xffff]) {
      const listing = zipEntries(zip(FILES, { comment: Buffer.alloc(length, 'c') }));
      expect(listing.ok && listing.entries.length).toBe(2);
    }
  });

  it('refuses an archive cut short at any length, without reading past its bytes', () => {
    for (let length = 0; length < WHOLE.length; length++)
      expect(zipEntries(WHOLE.subarray(0, length))).toMatchObject({ ok: false, problem: 'no-end-record' });
    // The end record kept, part of the directory before it gone.
    const directoryStart = WHOLE.readUInt32LE(WHOLE.length - 6);
    const cut = Buffer.concat([WHOLE.subarray(0, directoryStart + 30), WHOLE.subarray(WHOLE.length - 22)]);
    expect(zipEntries(cut)).toMatchObject({ ok: false, problem: 'truncated' });
    expect(zipEntries(zip(FILES, { directoryStart: 1 << 30 }))).toMatchObject({
      ok: false,
      problem: 'truncated',
    });
  });

  it('reads a ZIP64 size marker as Infinity and refuses a ZIP64 end record', () => {
    const listing = zipEntries(zip(FILES, { firstUncompressed: 0xffffffff }));
    expect(listing.ok && listing.entries[0]?.uncompressedBytes).toBe(Number.POSITIVE_INFINITY);
    expect(zipEntries(zip(FILES, { count: 0xffff }))).toMatchObject({ ok: false, problem: 'zip64' });
    expect(zipEntries(zip(FILES, { directoryStart: 0xffffffff }))).toMatchObject({
      ok: false,
      problem: 'zip64',
    });
    expect(zipEntries(zip(FILES, { directoryBytes: 0xffffffff }))).toMatchObject({
      ok: false,
      problem: 'zip64',
    });
  });

  it('refuses an entry count that disagrees with the directory', () => {
    const mismatch = { ok: false, problem: 'count-mismatch' };
    // Fewer counted than the directory holds, whether its size covers them all or only the counted one.
    expect(zipEntries(zip(FILES, { count: 1 }))).toMatchObject(mismatch);
    const firstHeaderBytes = 46 + '[Content_Types].xml'.length;
    expect(zipEntries(zip(FILES, { count: 1, directoryBytes: firstHeaderBytes }))).toMatchObject(mismatch);
    // More counted than it holds.
    expect(zipEntries(zip(FILES, { count: 3 }))).toMatchObject(mismatch);
    // A size that ends inside a header.
    expect(zipEntries(zip(FILES, { directoryBytes: firstHeaderBytes + 10 }))).toMatchObject(mismatch);
    // A central header smuggled in after the directory the end record bounds (JSZip would read it).
    const smuggled = Buffer.alloc(46);
    smuggled.writeUInt32LE(0x02014b50, 0);
    smuggled.writeUInt32LE(0xfffffffe, 24);
    expect(zipEntries(zip(FILES, { afterDirectory: smuggled }))).toMatchObject(mismatch);
  });

  it('refuses a header without its signature, and bytes that are no archive', () => {
    const bent = Buffer.from(WHOLE);
    bent.writeUInt32LE(0, WHOLE.readUInt32LE(WHOLE.length - 6));
    expect(zipEntries(bent)).toMatchObject({ ok: false, problem: 'bad-entry' });
    expect(zipEntries(new Uint8Array())).toMatchObject({ ok: false, problem: 'no-end-record' });
    expect(zipEntries(Buffer.from('PK\x03\x04 no archive behind this'))).toMatchObject({ ok: false });
  });

  it('reads a view into a larger buffer from the view, not the buffer', () => {
    const padded = Buffer.concat([Buffer.alloc(7, 0xaa), WHOLE, Buffer.alloc(5, 0xbb)]);
    const listing = zipEntries(padded.subarray(7, 7 + WHOLE.length));
    expect(listing.ok && listing.entries.length).toBe(2);
  });

  it('never throws on a damaged archive, and lists only what lies inside it', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat({ max: WHOLE.length - 1 }), fc.nat({ max: 255 })), { maxLength: 8 }),
        fc.nat({ max: WHOLE.length }),
        (edits, cut) => {
          const bytes = Buffer.from(WHOLE);
          for (const [at, value] of edits) bytes[at] = value;
          const listing = zipEntries(bytes.subarray(0, cut));
          if (listing.ok) for (const entry of listing.entries) expect(entry.name.length).toBeLessThan(cut);
        },
      ),
      { numRuns: 2_000 },
    );
  });
});
