/**
 * The entries a ZIP archive's central directory lists (APPNOTE.TXT §4.3.12, §4.3.16), read without
 * inflating anything: what the DOCX sniff (`document-sniff.ts`) and the DOCX zip-bomb guard
 * (`extract/documents/docx.ts`) need before mammoth is trusted with the bytes. One pass over the
 * directory, linear in its size; nothing is read outside `bytes`.
 *
 * The directory, not the local headers, is read: it is where readers look (mammoth's JSZip among
 * them), and a local header's sizes may be left to a data descriptor after the data. Anything this
 * reader cannot vouch for is refused with a reason rather than half read: an archive cut short (its
 * directory is at the end), a ZIP64 archive (none of the formats sniffed here needs one), and a
 * directory whose entry count disagrees with its size or with what follows it, since JSZip reads
 * every central header it finds in a row whatever the count says: entries past the count would
 * escape a size cap taken from the count alone.
 */

/** One file in the archive, as its central-directory header declares it. */
export interface ZipEntry {
  /** Path in the archive, decoded as UTF-8 (as JSZip decodes it; ASCII names read the same either way). */
  readonly name: string;
  /** Stored (compressed) size in bytes; `Infinity` for the ZIP64 marker 0xFFFFFFFF (size kept elsewhere). */
  readonly compressedBytes: number;
  /** Unpacked size in bytes, as declared; `Infinity` for the ZIP64 marker, so any cap refuses it. */
  readonly uncompressedBytes: number;
  /** Compression method (APPNOTE §4.4.5): 0 stored, 8 deflated; readers here know no other. */
  readonly method: number;
  /** Where the entry's local header starts; its data follows that header's name and extra field. */
  readonly localHeaderOffset: number;
}

/**
 * Why the bytes are no archive this reader lists: no end record in reach (not a ZIP, or cut short),
 * a ZIP64 or split archive, a directory that runs past its end record (cut or forged), a header
 * without its signature, or an entry count that disagrees with the directory's size or contents.
 */
export type ZipProblem =
  | 'no-end-record'
  | 'zip64'
  | 'multi-disk'
  | 'truncated'
  | 'bad-entry'
  | 'count-mismatch';

export type ZipListing =
  | { readonly ok: true; readonly entries: readonly ZipEntry[] }
  | { readonly ok: false; readonly problem: ZipProblem; readonly detail: string };

const EOCD_SIGNATURE = 0x06054b50; // PK\x05\x06
const CENTRAL_SIGNATURE = 0x02014b50; // PK\x01\x02
const EOCD_BYTES = 22;
const CENTRAL_HEADER_BYTES = 46;
/** The end-of-central-directory record sits behind an archive comment of up to 64 KiB. */
const EOCD_WINDOW_BYTES = EOCD_BYTES + 0xffff;
/** A 16- or 32-bit field holding all ones says "the value is in the ZIP64 record" (APPNOTE §4.4.1.4). */
const ZIP64_U16 = 0xffff;
const ZIP64_U32 = 0xffffffff;

// ignoreBOM keeps a leading U+FEFF in the name, so a name is only what its bytes spell.
const names = new TextDecoder('utf-8', { ignoreBOM: true });

/** The central directory's entries, in order, or why there is no directory to trust. */
export function zipEntries(bytes: Uint8Array): ZipListing {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const eocd = findEndRecord(view);
  if (eocd === undefined)
    return refuse('no-end-record', 'no end-of-central-directory record in the last 64 KiB');
  const thisDisk = view.getUint16(eocd + 4, true);
  const directoryDisk = view.getUint16(eocd + 6, true);
  const countHere = view.getUint16(eocd + 8, true);
  const count = view.getUint16(eocd + 10, true);
  const directoryBytes = view.getUint32(eocd + 12, true);
  const directoryStart = view.getUint32(eocd + 16, true);
  if (
    count === ZIP64_U16 ||
    countHere === ZIP64_U16 ||
    directoryBytes === ZIP64_U32 ||
    directoryStart === ZIP64_U32
  )
    return refuse('zip64', 'the end record defers to a ZIP64 record');
  if (thisDisk !== 0 || directoryDisk !== 0 || countHere !== count)
    return refuse('multi-disk', 'the archive is split across disks');
  // The directory lies before its end record; one that runs into it or past it was cut or forged.
  if (directoryStart + directoryBytes > eocd)
    return refuse(
      'truncated',
      `the directory (${directoryBytes} bytes at ${directoryStart}) runs past its end record`,
    );

  // Each header must lie inside the directory the end record bounds, and the count must fill it.
  const directoryEnd = directoryStart + directoryBytes;
  const mismatch = () =>
    refuse(
      'count-mismatch',
      `the end record counts ${count} entries in ${directoryBytes} bytes; the headers disagree`,
    );
  const entries: ZipEntry[] = [];
  let at = directoryStart;
  for (let i = 0; i < count; i++) {
    if (at + CENTRAL_HEADER_BYTES > directoryEnd) return mismatch();
    if (view.getUint32(at, true) !== CENTRAL_SIGNATURE)
      return refuse('bad-entry', `entry ${i + 1} of ${count} has no central-header signature`);
    const nameBytes = view.getUint16(at + 28, true);
    const next =
      at + CENTRAL_HEADER_BYTES + nameBytes + view.getUint16(at + 30, true) + view.getUint16(at + 32, true);
    if (next > directoryEnd) return mismatch();
    entries.push({
      name: names.decode(bytes.subarray(at + CENTRAL_HEADER_BYTES, at + CENTRAL_HEADER_BYTES + nameBytes)),
      compressedBytes: size(view.getUint32(at + 20, true)),
      uncompressedBytes: size(view.getUint32(at + 24, true)),
      method: view.getUint16(at + 10, true),
      localHeaderOffset: view.getUint32(at + 42, true),
    });
    at = next;
  }
  // JSZip goes on while central headers follow: one past the count would escape a cap on the count.
  if (at !== directoryEnd || (at + 4 <= eocd && view.getUint32(at, true) === CENTRAL_SIGNATURE))
    return mismatch();
  return { ok: true, entries };
}

/** The last end-record signature within the window (a comment may follow the record, up to 64 KiB). */
function findEndRecord(view: DataView): number | undefined {
  const stop = Math.max(0, view.byteLength - EOCD_WINDOW_BYTES);
  for (let at = view.byteLength - EOCD_BYTES; at >= stop; at--) {
    if (view.getUint32(at, true) === EOCD_SIGNATURE) return at;
  }
  return undefined;
}

function size(field: number): number {
  return field === ZIP64_U32 ? Number.POSITIVE_INFINITY : field;
}

function refuse(problem: ZipProblem, detail: string): ZipListing {
  return { ok: false, problem, detail };
}
