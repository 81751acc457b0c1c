import { readFileSync } from 'node:fs';
import path from 'node:path';
import { deflateRawSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { zipEntries } from '../../domain/zip-entries';

/**
 * Test archives are written here header by header after PKWARE's APPNOTE.TXT §4.3 (local header,
 * data deflated with node:zlib's `deflateRawSync`, central-directory header, end record), so a test
 * can bend the one field it is about. Info-ZIP's `unzip -t` tested the unbent archive clean when
 * this builder was written.
 */
interface Bend {
  /** Archive comment behind the end record. */
  comment?: Buffer;
  /** Entry count the end record declares (both its fields). @default the real count */
  count?: number;
  /** Directory size the end record declares. @default the real size */
  directoryBytes?: number;
  /** Directory offset the end record declares. @default the real offset */
  directoryStart?: number;
  /** Uncompressed size the first central header declares. @default the real size */
  firstUncompressed?: number;
  /** Bytes written after the directory, before the end record (never counted in its size). */
  afterDirectory?: Buffer;
}

function zip(files: Record<string, string>, bend: Bend = {}): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [i, [name, text]] of Object.entries(files).entries()) {
    const nameBytes = Buffer.from(name, 'utf8');
    const data = Buffer.from(text, 'utf8');
    const packed = deflateRawSync(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed: 2.0 (deflate)
    local.writeUInt16LE(0x0800, 6); // flags: names in UTF-8
    local.writeUInt16LE(8, 8); // method: deflate
    local.writeUInt32LE(crc32(data), 14);
    local.writeUInt32LE(packed.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4); // version made by
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(crc32(data), 16);
    central.writeUInt32LE(packed.length, 20);
    central.writeUInt32LE(i === 0 ? (bend.firstUncompressed ?? data.length) : data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, packed);
    centrals.push(central, nameBytes);
    offset += local.length + nameBytes.length + packed.length;
  }
  const directory = Buffer.concat(centrals);
  const comment = bend.comment ?? Buffer.alloc(0);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  const count = bend.count ?? Object.keys(files).length;
  end.writeUInt16LE(count, 8);
  end.writeUInt16LE(count, 10);
  end.writeUInt32LE(bend.directoryBytes ?? directory.length, 12);
  end.writeUInt32LE(bend.directoryStart ?? offset, 16);
  end.writeUInt16LE(comment.length, 20);
  return Buffer.concat([...locals, directory, bend.afterDirectory ?? Buffer.alloc(0), end, comment]);
}

/** CRC-32 (IEEE), which the headers carry; the reader does not check it, unzip does. */
function crc32(data: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of data) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

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
        },
        {
          name: 'word/document.xml',
          compressedBytes: deflateRawSync(document).length,
          uncompressedBytes: document.length,
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
