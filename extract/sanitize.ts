/**
 * Linear pre-pass over raw HTML before any DOM parser sees it. It bounds the work the parsers and
 * Readability can do: input is cut at `maxInputBytes`, NULs and other C0 controls (binary bytes
 * served as HTML) are dropped, scripts and styles are cut out (JSON-LD is kept aside first), and
 * nesting is capped at `maxDepth` by dropping deeper tags (their text stays). Deep nesting matters
 * because htmlparser2 (under linkedom) scans its open-element stack on every tag, and Readability
 * and turndown recurse: 10,000 nested `<div>`s would otherwise cost seconds or the stack.
 */
import { VOID_ELEMENTS } from '../domain/html-void-elements';

export interface SanitizedHtml {
  html: string;
  /** Raw text of each `<script type="application/ld+json">`, in document order. */
  jsonLd: string[];
  /** True when the input was cut at `maxInputBytes`. */
  truncated: boolean;
  /** Tags dropped by the depth cap. */
  droppedTags: number;
}

/** Elements that a second opening of the same name implicitly closes. */
const SELF_CLOSING_SIBLINGS = new Set(['p', 'li', 'dt', 'dd', 'option', 'tr', 'td', 'th']);
const FOREIGN_ROOTS = new Set(['svg', 'math']);
const MAX_JSON_LD_CHARS = 200_000;

export function sanitizeHtml(input: string, maxInputChars: number, maxDepth: number): SanitizedHtml {
  const truncated = input.length > maxInputChars;
  let html = truncated ? input.slice(0, maxInputChars) : input;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing binary garbage is the point
  html = html.replace(/[\u0000-\u0008\u000b\u000e-\u001f\ufffe\uffff]/g, '');
  const jsonLd: string[] = [];
  html = cutElements(html, /<(script)\b/gi, (attrs, body) => {
    if (/application\/ld\+json/i.test(attrs) && body.length <= MAX_JSON_LD_CHARS) jsonLd.push(body);
  });
  html = cutElements(html, /<(style|template)\b/gi);
  // A crawler runs no scripts, so what <noscript> holds is what it sees (Discourse serves its posts there).
  html = replaceTags(html, /<\/?noscript\b/gi, () => '');
  html = html.replace(/<!--[\s\S]*?(?:-->|$)/g, '');
  const capped = capDepth(html, maxDepth);
  return { html: capped.html, jsonLd, truncated, droppedTags: capped.dropped };
}

/**
 * Drops start and end tags deeper than `maxDepth`, approximating the HTML tree with a stack: void
 * elements never open, an end tag pops to its matching start tag (if any is open), and `p`, `li`,
 * `td` and friends close an open sibling of the same name. Raw-text elements are already gone.
 * `/>` closes an element only inside SVG or MathML: HTML ignores it elsewhere, so 16,000 `<div/>`
 * nest 16,000 deep for the DOM parser (110 s of extraction when they were taken for closed).
 */
function capDepth(html: string, maxDepth: number): { html: string; dropped: number } {
  const stack: { name: string; dropped: boolean }[] = [];
  let dropped = 0;
  let overflowed = false;
  let foreign = 0;
  const truncate = (length: number) => {
    for (let i = length; i < stack.length; i++) if (FOREIGN_ROOTS.has(stack[i]?.name ?? '')) foreign--;
    stack.length = length;
  };
  const out = replaceTags(html, /<(\/?)([a-zA-Z][\w:-]*)\b/g, (tag, [, slash = '', rawName = '']) => {
    const name = rawName.toLowerCase();
    if (slash === '') {
      if (VOID_ELEMENTS.has(name) || (foreign > 0 && tag.endsWith('/>'))) return tag;
      if (SELF_CLOSING_SIBLINGS.has(name) && stack.at(-1)?.name === name) {
        if (stack.pop()?.dropped) dropped++;
      }
      const drop = stack.length >= maxDepth;
      stack.push({ name, dropped: drop });
      if (FOREIGN_ROOTS.has(name)) foreign++;
      if (drop) {
        overflowed = true;
        dropped++;
        return '';
      }
      return tag;
    }
    if (!overflowed) {
      // Fast path while nothing was dropped: keep the stack roughly right.
      for (let i = stack.length - 1; i >= 0; i--) {
        if (stack[i]?.name === name) {
          truncate(i);
          break;
        }
      }
      return tag;
    }
    for (let i = stack.length - 1; i >= 0; i--) {
      const entry = stack[i];
      if (entry?.name === name) {
        truncate(i);
        if (entry.dropped) {
          dropped++;
          return '';
        }
        return tag;
      }
      // Give up searching far down the stack: an unmatched end tag stays cheap.
      if (stack.length - i > 64) break;
    }
    return tag;
  });
  return { html: out, dropped };
}

/**
 * `html` with every tag that `opener` starts replaced by `replace(tag, openerMatch)`, a tag running
 * from its opener to the next `>`: what `html.replace(/<opener>[^>]*>/g, …)` does, in linear time.
 * That regex is quadratic where no `>` follows: each of 40,000 `<a` scans to the end before it fails.
 * Once no `>` is left, no later opener can match either, so the scan stops. `opener` must be global.
 */
export function replaceTags(
  html: string,
  opener: RegExp,
  replace: (tag: string, match: RegExpExecArray) => string,
): string {
  let out = '';
  let copied = 0;
  opener.lastIndex = 0;
  for (let match = opener.exec(html); match !== null; match = opener.exec(html)) {
    const gt = html.indexOf('>', opener.lastIndex);
    if (gt === -1) break;
    out += html.slice(copied, match.index) + replace(html.slice(match.index, gt + 1), match);
    copied = gt + 1;
    opener.lastIndex = copied;
  }
  return copied === 0 ? html : out + html.slice(copied);
}

const closers = new Map<string, RegExp>();

/**
 * Removes each element `opener` starts (its first group names it) with its content, up to its end tag
 * or the end of the input: `html.replace(/<(name)\b([^>]*)>([\s\S]*?)(?:<\/\1\s*>|$)/gi, '')`, in
 * linear time (see {@link replaceTags}). `seen` gets each element's attribute text and content.
 */
function cutElements(html: string, opener: RegExp, seen?: (attrs: string, body: string) => void): string {
  let out = '';
  let copied = 0;
  opener.lastIndex = 0;
  for (let match = opener.exec(html); match !== null; match = opener.exec(html)) {
    const gt = html.indexOf('>', opener.lastIndex);
    if (gt === -1) break;
    const name = (match[1] ?? '').toLowerCase();
    let closer = closers.get(name);
    if (closer === undefined) {
      closer = new RegExp(`</${name}\\s*>`, 'gi');
      closers.set(name, closer);
    }
    closer.lastIndex = gt + 1;
    const close = closer.exec(html);
    const end = close ? close.index + close[0].length : html.length;
    seen?.(html.slice(opener.lastIndex, gt), html.slice(gt + 1, close ? close.index : html.length));
    out += html.slice(copied, match.index);
    copied = end;
    opener.lastIndex = end;
  }
  return copied === 0 ? html : out + html.slice(copied);
}
