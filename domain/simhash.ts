/**
 * 64-bit SimHash (Charikar) over a text's word shingles, for near-duplicate detection: texts that
 * share most of their shingles get fingerprints a few bits apart. Pure code, used by the page
 * content activity; the fingerprint is stored as a signed bigint so Postgres can index it.
 *
 * The fingerprint is kept as two unsigned 32-bit halves in JS (no BigInt in the hot loop); the
 * four 16-bit blocks are the pigeonhole bands: two fingerprints at Hamming distance ≤ 3 agree on
 * at least one of the four blocks, so an index on each block finds every candidate without a
 * scan of all pairs.
 */

export interface SimHash {
  /** Bits 63..32, unsigned. */
  hi: number;
  /** Bits 31..0, unsigned. */
  lo: number;
}

/** Words per shingle: a one-word edit then changes at most this many features. */
export const SHINGLE_WORDS = 3;
/** Hamming distance at or below which two pages count as near duplicates. */
export const NEAR_DUPLICATE_BITS = 3;

const WORD = /[\p{L}\p{N}]+/gu;

/** The SimHash of `text`'s lower-cased word shingles (each weighted by how often it occurs). */
export function simhash(text: string): SimHash {
  const words = text.toLowerCase().match(WORD) ?? [];
  // Votes add up, so each occurrence of a shingle votes once instead of its count once: no map of
  // shingles, and each shingle is hashed from its words without being joined into a string (a
  // third of the time of the joined-and-counted form on documentation pages, same fingerprint).
  const votes = new Int32Array(64);
  const span = words.length < SHINGLE_WORDS ? 1 : SHINGLE_WORDS;
  for (let i = 0; i + span <= words.length; i++) {
    const lo = shingleHash(words, i, span, 0x811c9dc5);
    const hi = shingleHash(words, i, span, 0x050c5d1f);
    for (let bit = 0; bit < 32; bit++) {
      votes[bit] = (votes[bit] as number) + (((lo >>> bit) & 1) << 1) - 1;
      votes[32 + bit] = (votes[32 + bit] as number) + (((hi >>> bit) & 1) << 1) - 1;
    }
  }
  let lo = 0;
  let hi = 0;
  for (let bit = 0; bit < 32; bit++) {
    if ((votes[bit] as number) > 0) lo |= 1 << bit;
    if ((votes[32 + bit] as number) > 0) hi |= 1 << bit;
  }
  return { hi: hi >>> 0, lo: lo >>> 0 };
}

/** Number of differing bits. */
export function hammingDistance(a: SimHash, b: SimHash): number {
  return popcount32(a.hi ^ b.hi) + popcount32(a.lo ^ b.lo);
}

/** The four 16-bit blocks, high to low: the bands of the pigeonhole index. */
export function simhashBands(h: SimHash): [number, number, number, number] {
  return [h.hi >>> 16, h.hi & 0xffff, h.lo >>> 16, h.lo & 0xffff];
}

/** As Postgres stores it: a signed 64-bit integer, in decimal. */
export function simhashToSigned(h: SimHash): string {
  return BigInt.asIntN(64, (BigInt(h.hi) << 32n) | BigInt(h.lo)).toString();
}

/** The inverse of {@link simhashToSigned}. */
export function simhashFromSigned(value: string | number | bigint): SimHash {
  const unsigned = BigInt.asUintN(64, BigInt(value));
  return { hi: Number(unsigned >> 32n), lo: Number(unsigned & 0xffffffffn) };
}

/**
 * FNV-1a over the UTF-16 code units of `words[from..from+count)` joined by single spaces, finished
 * with murmur3's avalanche so every bit mixes.
 */
function shingleHash(words: readonly string[], from: number, count: number, basis: number): number {
  let h = basis;
  for (let w = from; w < from + count; w++) {
    if (w > from) h = Math.imul(h ^ 0x20, 0x01000193);
    const word = words[w] as string;
    for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function popcount32(value: number): number {
  let v = value - ((value >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 0xff;
}
