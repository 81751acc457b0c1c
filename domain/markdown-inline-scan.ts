/**
 * Linear-time scans for Markdown inline syntax in untrusted page text. The regexes they replace
 * (`!\[[^\]]*\]\([^)]*\)`, the link regex, `<[^>]+>`) look for a closer from every opener: a page
 * of openers without closers (`[[[[…`, `![![…`, `<<<<…`) made each one rescan the rest of the
 * text, quadratic in its size. Each scan here remembers the closer it found, so text is read once;
 * the matches and replacements are exactly the regexes'.
 */

/** `indexOf` for queries whose start only grows: a closer found once is reused by later openers. */
function forwardFinder(text: string, char: string): (from: number) => number {
  let knownFrom = Number.POSITIVE_INFINITY;
  let known = -1;
  return (from) => {
    if (from >= knownFrom && (known === -1 || from <= known)) return known;
    knownFrom = from;
    known = text.indexOf(char, from);
    return known;
  };
}

/** `text.replace(/!\[[^\]]*\]\([^)]*\)/g, replacement)`. */
export function replaceImages(text: string, replacement: string): string {
  const nextClose = forwardFinder(text, ']');
  const nextParen = forwardFinder(text, ')');
  let out = '';
  let copied = 0;
  for (let at = text.indexOf('![', 0); at !== -1; at = text.indexOf('![', at + 1)) {
    if (at < copied) continue;
    const close = nextClose(at + 2);
    if (close === -1) break;
    if (text[close + 1] !== '(') continue;
    const end = nextParen(close + 2);
    if (end === -1) break;
    out += text.slice(copied, at) + replacement;
    copied = end + 1;
    at = end;
  }
  return out + text.slice(copied);
}

/** `text.replace(/<[^>]+>/g, replacement)`: an opener matches up to the first `>` after it. */
export function replaceAngleTags(text: string, replacement: string): string {
  let out = '';
  let copied = 0;
  let at = text.indexOf('<');
  while (at !== -1) {
    const end = text.indexOf('>', at + 1);
    // Without a closer no later opener has one either: the rest stays as it is.
    if (end === -1) break;
    if (end === at + 1) {
      at = text.indexOf('<', at + 1);
      continue;
    }
    out += text.slice(copied, at) + replacement;
    copied = end + 1;
    at = text.indexOf('<', copied);
  }
  return out + text.slice(copied);
}

const LINE_TERMINATOR = /[\n\r\u2028\u2029]/;
const BLANK = /\s/;

/**
 * Where `(?:\\.|[^\]\\])*\]` starting at `from` finds its `]`, or -1, and where the scan stopped.
 * Escapes pair the same way from any unescaped `[` inside the scanned span, so a later opener in
 * it meets the same `]` (or the same dead end).
 */
function linkTextScanner(text: string): (from: number) => number {
  let scannedFrom = Number.POSITIVE_INFINITY;
  let stoppedAt = -1;
  let found = -1;
  return (from) => {
    if (from >= scannedFrom && from <= stoppedAt) return found;
    scannedFrom = from;
    let i = from;
    found = -1;
    while (i < text.length) {
      const char = text[i];
      if (char === ']') {
        found = i;
        break;
      }
      if (char === '\\') {
        const next = text[i + 1];
        if (next === undefined || LINE_TERMINATOR.test(next)) break;
        i += 2;
        continue;
      }
      i += 1;
    }
    stoppedAt = i;
    return found;
  };
}

/** The end (exclusive) of `\((?:[^()\s]|\([^()]*\))*(?:\s+"[^"]*")?\)` at `at`, or -1. */
function destinationEnd(text: string, at: number): number {
  if (text[at] !== '(') return -1;
  let i = at + 1;
  while (i < text.length) {
    const char = text[i] as string;
    if (char === ')') return i + 1;
    if (char === '(') {
      let j = i + 1;
      while (j < text.length && text[j] !== '(' && text[j] !== ')') j += 1;
      if (text[j] !== ')') return -1;
      i = j + 1;
      continue;
    }
    if (BLANK.test(char)) {
      let j = i;
      while (j < text.length && BLANK.test(text[j] as string)) j += 1;
      if (text[j] !== '"') return -1;
      const quote = text.indexOf('"', j + 1);
      if (quote === -1 || text[quote + 1] !== ')') return -1;
      return quote + 2;
    }
    i += 1;
  }
  return -1;
}

/**
 * `text.replace(/!?\[((?:\\.|[^\]\\])*)\]\((?:[^()\s]|\([^()]*\))*(?:\s+"[^"]*")?\)/g, '$1')`
 * (with `withBang`), or the same without `!?`: links and images reduced to their text.
 */
export function replaceLinksWithText(text: string, withBang: boolean): string {
  const textEnd = linkTextScanner(text);
  // Openers inside one link text share its `]`, so they share its destination too.
  let destinationOf = -1;
  let destination = -1;
  let out = '';
  let copied = 0;
  for (let at = text.indexOf('[', 0); at !== -1; at = text.indexOf('[', at + 1)) {
    if (at < copied) continue;
    const close = textEnd(at + 1);
    if (close === -1) continue;
    if (close !== destinationOf) {
      destinationOf = close;
      destination = destinationEnd(text, close + 1);
    }
    const end = destination;
    if (end === -1) continue;
    const start = withBang && at > copied && text[at - 1] === '!' ? at - 1 : at;
    out += text.slice(copied, start) + text.slice(at + 1, close);
    copied = end;
    at = end - 1;
  }
  return out + text.slice(copied);
}

const AUTOLINK_OPENER = /<(?:https?|mailto):/g;

/**
 * `text.replace(/<(?:https?|mailto):[^>\s]*>/g, '')`. Openers before the same `>` or blank share
 * it, so the scan for it is remembered.
 */
export function removeAutolinks(text: string): string {
  let out = '';
  let copied = 0;
  let stopFrom = Number.POSITIVE_INFINITY;
  let stop = -1;
  AUTOLINK_OPENER.lastIndex = 0;
  for (let match = AUTOLINK_OPENER.exec(text); match; match = AUTOLINK_OPENER.exec(text)) {
    const from = match.index + match[0].length;
    if (!(from >= stopFrom && from <= stop)) {
      stopFrom = from;
      stop = from;
      while (stop < text.length && text[stop] !== '>' && !BLANK.test(text[stop] as string)) stop += 1;
    }
    if (text[stop] !== '>') continue;
    out += text.slice(copied, match.index);
    copied = stop + 1;
    AUTOLINK_OPENER.lastIndex = copied;
  }
  return out + text.slice(copied);
}
