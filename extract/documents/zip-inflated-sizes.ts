/**
 * Does each entry of an archive unpack to no more than its central directory declares? The DOCX cap
 * (`docx.ts`) adds up the declared sizes, but a forged archive may declare a kilobyte and deflate to
 * gigabytes: JSZip (inside mammoth) notices the mismatch only after inflating the whole entry into
 * memory (a 62 KB file declaring 1,000 bytes was inflated to 60 MB before "uncompressed data size
 * mismatch"), and the 10 MB body cap allows ~10 GB that way. Here every deflated entry is streamed
 * through zlib with its output counted and dropped, stopping one chunk past the declared size, so
 * the work and memory are bounded by the declared total that the cap has already checked.
 */
import { createInflateRaw } from 'node:zlib';
import type { ZipEntry } from '../../domain/zip-entries';

const LOCAL_SIGNATURE = 0x04034b50; // PK\x03\x04
const LOCAL_HEADER_BYTES = 30;
const STORED = 0;
const DEFLATED = 8;

/** Why the archive does not unpack as declared, or undefined when every entry does. */
export async function inflatedSizeProblem(
  bytes: Uint8Array,
  entries: readonly ZipEntry[],
): Promise<string | undefined> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (const entry of entries) {
    const at = entry.localHeaderOffset;
    if (at + LOCAL_HEADER_BYTES > bytes.length || view.getUint32(at, true) !== LOCAL_SIGNATURE)
      return `${entry.name}: no local header at ${at}`;
    const start = at + LOCAL_HEADER_BYTES + view.getUint16(at + 26, true) + view.getUint16(at + 28, true);
    const end = start + entry.compressedBytes;
    if (end > bytes.length) return `${entry.name}: its data runs past the end of the archive`;
    if (entry.method === STORED) {
      if (entry.compressedBytes !== entry.uncompressedBytes)
        return `${entry.name}: stored ${entry.compressedBytes} bytes but declares ${entry.uncompressedBytes}`;
      continue;
    }
    // Readers here know no other method, and refuse it themselves without unpacking anything.
    if (entry.method !== DEFLATED) continue;
    const inflated = await inflatedBytesUpTo(bytes.subarray(start, end), entry.uncompressedBytes);
    if (inflated.error) return `${entry.name}: ${inflated.error}`;
    if (inflated.bytes > entry.uncompressedBytes)
      return `${entry.name} unpacks to more than the ${entry.uncompressedBytes} bytes it declares`;
  }
  return undefined;
}

/** Bytes the raw deflate stream inflates to, counted until it passes `limit` (then it stops). */
function inflatedBytesUpTo(data: Uint8Array, limit: number): Promise<{ bytes: number; error?: string }> {
  return new Promise((resolve) => {
    const inflate = createInflateRaw();
    let bytes = 0;
    inflate.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > limit) {
        inflate.destroy();
        resolve({ bytes });
      }
    });
    inflate.on('end', () => resolve({ bytes }));
    inflate.on('error', (error) => resolve({ bytes, error: `does not inflate (${error.message})` }));
    inflate.end(data);
  });
}
