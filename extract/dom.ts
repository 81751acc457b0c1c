/**
 * Parses HTML into a DOM for extraction. linkedom is the default: on the WCXB development pages it
 * gives Readability nearly the same F1 as jsdom at about a tenth of the time (DESIGN.md, and
 * `npm run bench:extract -- --dom jsdom` measures it again). jsdom stays available because it is the
 * named, standards-complete base and the reference when the two disagree.
 *
 * linkedom is patched (patches/linkedom+0.18.11.patch, applied by patch-package on install):
 * - its EventTarget constructor put a Map into a WeakMap for every node, a third of the parse's
 *   garbage and ~8 % of extraction CPU; now a node gets its map on first addEventListener. Median CPU
 *   per page on the first 300 wcxb-dev pages 57.2 → 41.9 ms (bench:extract, same load).
 * - every element with a class got a DOMTokenList during the parse, and every getAttribute('class')
 *   and class selector joined it into a new string; now the attribute holds the normalised value and
 *   the list is built on first use of classList (~7 % of extraction CPU).
 * Same output on all 1,497 wcxb-dev pages (every extraction result hashed before and after).
 *
 * linkedom builds `children` and `childNodes` afresh on every read (a walk of the siblings), so a
 * library loop that reads `node.children[x]` per item is quadratic here though linear on a live DOM.
 * Readability had one (its image-list check: 8,000 empty `<li>` took 14 s); it is patched
 * (patches/@mozilla+readability+0.6.0.patch) and test/extract/linear-time-properties.test.ts guards it.
 */
import { createRequire } from 'node:module';
import { parseHTML } from 'linkedom';

/**
 * jsdom is required on first use, not imported: loading it (and css-tree, whatwg-url, ...) cost every
 * process and analysis thread that extracts ~0.3-0.5 s of CPU at start-up for a parser only
 * `--dom jsdom` runs.
 */
let jsdom: typeof import('jsdom') | undefined;
function loadJsdom(): typeof import('jsdom') {
  jsdom ??= createRequire(import.meta.url)('jsdom') as typeof import('jsdom');
  return jsdom;
}

export type DomKind = 'linkedom' | 'jsdom';
export const DOM_KINDS: readonly DomKind[] = ['linkedom', 'jsdom'];

export function parseDocument(html: string, url: string | undefined, dom: DomKind): Document {
  if (dom === 'jsdom') {
    return new (loadJsdom().JSDOM)(html, url ? { url } : {}).window.document;
  }
  // linkedom needs a whole document to give a <head> and <body>; some inputs (an `<html` that is only
  // text, a stray `</html>` first) leave it without a document element, so wrap and parse again.
  const wrap = (body: string) => `<!DOCTYPE html><html><body>${body}</body></html>`;
  const source = /<html[\s>]/i.test(html.slice(0, 4096)) ? html : wrap(html);
  let doc = parseHTML(source).document as unknown as Document;
  if (doc.documentElement === null || doc.documentElement === undefined) {
    doc = parseHTML(wrap(html.replace(/<\/?html\b[^>]*>/gi, ''))).document as unknown as Document;
  }
  return doc;
}
