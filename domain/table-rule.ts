/**
 * `text.replace(/^\s*\|?(?:\s*:?-{3,}:?\s*\|)+\s*:?-{0,}:?\s*\|?\s*$/gm, '')` — a Markdown table's
 * separator row removed — in linear time. The regex's adjacent `\s*`s split a run of blanks every
 * way before failing, and every line start of a blank run began again: a chunk of blanks took
 * time cubic in its length. This scan makes the regex's choices in the order its backtracking
 * would and stops at the first that succeeds, so the matches are the regex's.
 */

const isBlank = (char: string | undefined): boolean => char !== undefined && /\s/.test(char);
const isLineTerminator = (char: string | undefined): boolean =>
  char === '\n' || char === '\r' || char === '\u2028' || char === '\u2029';

function blanksEnd(text: string, from: number): number {
  let at = from;
  while (isBlank(text[at])) at += 1;
  return at;
}

/** The largest q in [from, to) before which `$` holds (a line terminator at q), or -1. */
function lastLineEnd(text: string, from: number, to: number): number {
  for (let q = to - 1; q >= from; q -= 1) if (isLineTerminator(text[q])) return q;
  return -1;
}

const isLineEnd = (text: string, at: number): boolean => at === text.length || isLineTerminator(text[at]);

/** `\s*\|?\s*$` from `from`: where the match ends, or -1. */
function closingBlanks(text: string, from: number): number {
  const pipe = blanksEnd(text, from);
  if (text[pipe] === '|') {
    const end = blanksEnd(text, pipe + 1);
    if (isLineEnd(text, end)) return end;
    const inner = lastLineEnd(text, pipe + 1, end);
    if (inner !== -1) return inner;
  }
  if (isLineEnd(text, pipe)) return pipe;
  return lastLineEnd(text, from, pipe);
}

/** The tail `\s*:?-{0,}:?\s*\|?\s*$` from `from`: where the match ends, or -1. */
function tail(text: string, from: number): number {
  const blanks = blanksEnd(text, from);
  let at = blanks;
  if (text[at] === ':') at += 1;
  while (text[at] === '-') at += 1;
  if (text[at] === ':') at += 1;
  const end = closingBlanks(text, at);
  if (end !== -1) return end;
  return lastLineEnd(text, from, blanks);
}

/** One `\s*:?-{3,}:?\s*\|` from `from`: where it ends, or -1 (it has one way to match). */
function cell(text: string, from: number): number {
  let at = blanksEnd(text, from);
  if (text[at] === ':') at += 1;
  const dashes = at;
  while (text[at] === '-') at += 1;
  if (at - dashes < 3) return -1;
  if (text[at] === ':') at += 1;
  at = blanksEnd(text, at);
  return text[at] === '|' ? at + 1 : -1;
}

/** The match from line start `start`, or -1; `blanks` is where its leading blanks end. */
function ruleAt(text: string, start: number): { end: number; blanks: number } {
  const blanks = blanksEnd(text, start);
  const first = text[blanks] === '|' ? blanks + 1 : blanks;
  const cellEnds: number[] = [];
  for (let at = cell(text, first); at !== -1; at = cell(text, at)) cellEnds.push(at);
  for (let k = cellEnds.length - 1; k >= 0; k -= 1) {
    const end = tail(text, cellEnds[k] as number);
    if (end !== -1) return { end, blanks };
  }
  return { end: -1, blanks };
}

export function withoutTableRules(text: string): string {
  let out = '';
  let copied = 0;
  // Line starts inside the leading blanks of a failed attempt would fail the same way.
  let failedThrough = -1;
  for (let start = 0; start <= text.length; start += 1) {
    if (start !== 0 && !isLineTerminator(text[start - 1])) continue;
    if (start < copied || start <= failedThrough) continue;
    const { end, blanks } = ruleAt(text, start);
    if (end === -1) {
      failedThrough = blanks;
      continue;
    }
    out += text.slice(copied, start);
    copied = end;
    start = end - 1;
  }
  return out + text.slice(copied);
}
