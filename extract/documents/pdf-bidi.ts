/**
 * Right-to-left lines of a PDF back into reading order. A PDF draws glyphs where they go on the page,
 * so Arabic and Hebrew come left to right, the reverse of how they are read; Chromium and other
 * writers that shape Arabic draw each glyph as its own run. pdf.js reorders each run on its own
 * (`bidi()` in its text layer), which puts a one-glyph run nowhere. So a line holding right-to-left
 * letters is put in visual order (left to right) and read back with the Unicode
 * Bidirectional Algorithm's resolution and reordering (UAX #9, rules W, N1/N2, I and L2), simplified
 * to what a line of text needs: no explicit embeddings, numbers as European numbers.
 *
 * Units are what pdf.js gives: a run holding right-to-left letters was already reordered inside by
 * pdf.js and moves whole; any other run is in visual order, so it is split into words, numbers and the
 * neutral characters between them, each placed on its own.
 *
 * Written here rather than with bidi-js (already installed, under jsdom): a bidi library takes a
 * string in logical order and returns the visual one, while a PDF line is the other way round and
 * its right-to-left runs arrive already reversed inside by pdf.js, so the units are not characters.
 */

/** Strong right-to-left letters and their marks (Hebrew, Arabic and the scripts written like them). */
const RTL_CHAR =
  /(?=[\p{L}\p{M}])[\p{scx=Hebrew}\p{scx=Arabic}\p{scx=Syriac}\p{scx=Thaana}\p{scx=Nko}\p{scx=Samaritan}\p{scx=Mandaic}\p{scx=Adlam}]/u;
const RTL_CHARS = new RegExp(RTL_CHAR.source, 'gu');
const LETTERS = /\p{L}/gu;
/** A left-to-right run split where its direction class changes: letters (with marks), numbers, the rest. */
const CLASS_PIECES = /[\p{L}\p{M}]+|\p{Nd}+(?:[.,:/\u066b\u066c]\p{Nd}+)*%?|[^\p{L}\p{M}\p{Nd}]+/gu;

type Direction = 'L' | 'R';
/** `EN`: a number; `N`: spaces and punctuation, which take the direction around them. */
type BidiClass = Direction | 'EN' | 'N';

export function hasRtlText(text: string): boolean {
  return RTL_CHAR.test(text);
}

export interface VisualPiece<T> {
  text: string;
  /** Where the piece came from (a text run), handed back with each piece in reading order. */
  source: T;
}

/**
 * Pieces of one line, in visual order (left to right), → the same text in reading order. The line's
 * direction is right-to-left when it holds at least as many right-to-left letters as others.
 */
export function readingOrder<T>(visual: readonly VisualPiece<T>[]): VisualPiece<T>[] {
  const units: { piece: VisualPiece<T>; kind: BidiClass }[] = [];
  let rtlLetters = 0;
  let letters = 0;
  for (const piece of visual) {
    const rtl = piece.text.match(RTL_CHARS)?.length ?? 0;
    rtlLetters += rtl;
    letters += piece.text.match(LETTERS)?.length ?? 0;
    if (rtl > 0) {
      // pdf.js put a space between a base glyph and a mark it drew apart; a mark follows its letter.
      units.push({ piece: { ...piece, text: piece.text.replace(/\s+(?=\p{M})/gu, '') }, kind: 'R' });
      continue;
    }
    for (const [text] of piece.text.matchAll(CLASS_PIECES))
      units.push({ piece: { text, source: piece.source }, kind: classOf(text) });
  }
  const base: Direction = rtlLetters * 2 >= letters ? 'R' : 'L';
  const levels = resolveLevels(
    units.map((unit) => unit.kind),
    base,
  );
  return reorder(units, levels).map((unit) => unit.piece);
}

function classOf(text: string): BidiClass {
  if (/\p{L}/u.test(text)) return 'L';
  if (/\p{Nd}/u.test(text)) return 'EN';
  return 'N';
}

/** Embedding level of each unit (0 left-to-right, 1 right-to-left, 2 left-to-right inside right-to-left). */
function resolveLevels(kinds: readonly BidiClass[], base: Direction): number[] {
  const baseLevel = base === 'R' ? 1 : 0;
  // W2/W7: a number after right-to-left text (or at the start of a right-to-left line) reads as an
  // Arabic number; after left-to-right text it is left-to-right. For the neutrals it is then R or L.
  const effective: (Direction | undefined)[] = new Array(kinds.length);
  let lastStrong: Direction = base;
  for (let i = 0; i < kinds.length; i++) {
    const kind = kinds[i] as BidiClass;
    if (kind === 'L' || kind === 'R') {
      lastStrong = kind;
      effective[i] = kind;
    } else if (kind === 'EN') effective[i] = lastStrong;
  }
  // N1/N2: neutrals between two units of one direction take it; others the line's.
  const next: (Direction | undefined)[] = new Array(kinds.length);
  let following: Direction = base;
  for (let i = kinds.length - 1; i >= 0; i--) {
    next[i] = following;
    following = effective[i] ?? following;
  }
  let previous: Direction = base;
  const levels: number[] = [];
  for (let i = 0; i < kinds.length; i++) {
    const kind = kinds[i] as BidiClass;
    let direction = effective[i];
    if (direction === undefined) direction = previous === next[i] ? previous : base;
    else previous = direction;
    // I1/I2: right-to-left is odd; left-to-right in a right-to-left line, and numbers in
    // right-to-left text, go one level up.
    if (kind === 'EN') levels.push(direction === 'R' || baseLevel === 1 ? 2 : 0);
    else if (direction === 'R') levels.push(1);
    else levels.push(baseLevel === 1 ? 2 : 0);
  }
  return levels;
}

/** L2: from the highest level down to 1, each run of units at that level or above is reversed. */
function reorder<U>(units: readonly U[], levels: readonly number[]): U[] {
  const order = [...units];
  const at = [...levels];
  let highest = 0;
  for (const level of levels) highest = Math.max(highest, level);
  for (let level = highest; level >= 1; level--) {
    let i = 0;
    while (i < order.length) {
      if ((at[i] as number) < level) {
        i++;
        continue;
      }
      let end = i;
      while (end < order.length && (at[end] as number) >= level) end++;
      reverse(order, i, end);
      reverse(at, i, end);
      i = end;
    }
  }
  return order;
}

function reverse<U>(items: U[], from: number, to: number): void {
  for (let i = from, j = to - 1; i < j; i++, j--) [items[i], items[j]] = [items[j] as U, items[i] as U];
}
