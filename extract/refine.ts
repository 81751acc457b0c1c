/**
 * Readability as a second opinion inside the selector chain's pick. A landmark such as `<main>` finds
 * the right region, but often holds more than the article: an author's bio, a newsletter box, an
 * affiliate disclosure, captions of a slideshow, a "more from" rail whose class names say nothing.
 * Readability, run on that region alone, scores its paragraphs and keeps the cluster that reads as
 * prose. When it keeps most of the region and drops no code, table or callout, its pick replaces the
 * region.
 *
 * Measured on wcxb-dev (`npm run bench:extract`, 1,497 pages, against the chain alone): Readability
 * trims the chain's pick on 792 pages; overall F1 0.8586 → 0.8622 (+5.3 page-points; 48 pages gain
 * more than 0.05, 27 lose as much), article 0.944 → 0.950, product 0.648 → 0.652, collection
 * 0.656 → 0.659, forum 0.782 → 0.785, documentation 0.9398 → 0.9392, listing 0.725 → 0.723, service
 * 0.833 → 0.829. Readability on the whole page instead of the region gained about the same but cost a
 * second full parse; pruning the region by the elements Readability kept lost F1 (Readability
 * rebuilds many elements, so what it kept cannot be traced back reliably).
 *
 * What it costs: this trim is where extraction's time per page went between aac6f27 and now (issue
 * 31). Alternating runs of the same bench over the first 400 wcxb-dev pages (2 cores, load ~20):
 * median CPU 25.7 / 25.5 ms per page before it (aac6f27), 42.8 / 41.9 ms with it (f702c46), 39.5–42.9
 * ms at every later commit to 74e18ae (the linear-time rewrites of sanitize and normalizeMarkdown
 * cost nothing measurable). A CPU profile of 300 pages puts 29 % of all time here, three quarters of
 * it inside Readability itself (`_grabArticle`, mostly `_cleanConditionally`), the rest the region's
 * re-parse, `removeChrome` and `measure` on the pick. It is kept for its F1 (+0.0036 overall, +0.006
 * on articles); the page-analysis deadline still bounds any one page.
 */
import { Readability } from '@mozilla/readability';
import { type Candidate, countWords, measure } from './candidate';
import { type DomKind, parseDocument } from './dom';
import { ADMONITION } from './link-lists';
import { renameElement } from './markdown';
import { type ChromeOptions, removeChrome } from './remove-chrome';

/** Below this many words Readability's pick is a fragment, not a trimmed article. */
const MIN_REFINED_WORDS = 200;
/**
 * Readability's pick must keep this share of the region's words: what it drops is then the region's
 * edges, not half of it (0.6–0.7 measured alike; below 0.6 service and listing pages lost sections).
 */
const MIN_REFINED_SHARE = 0.65;

/**
 * The chain's pick trimmed by Readability, or undefined when Readability disagrees (a fragment, too
 * much dropped, code or tables lost). The chain's own document is left untouched: Readability reads
 * a copy of the region, parsed from its serialisation (a subtree parses in a fraction of the page's
 * time).
 */
export function refineWithReadability(
  chain: Candidate,
  sourceDoc: Document,
  url: string | undefined,
  dom: DomKind,
  chrome: ChromeOptions,
): Candidate | undefined {
  if (chain.words < MIN_REFINED_WORDS) return undefined;
  let refined: Candidate;
  try {
    const doc = parseDocument(regionDocument(chain.root, sourceDoc), url, dom);
    const article = new Readability<Node>(doc, { keepClasses: true, serializer: (node) => node }).parse();
    const root = article?.content as Element | null | undefined;
    if (!root) return undefined;
    removeChrome(root, chrome);
    restoreMainHeading(chain.root, root);
    refined = measure(root, `${chain.strategy}+readability`);
  } catch {
    // A DOM or Readability failure on an odd region leaves the chain's answer standing.
    return undefined;
  }
  if (refined.words < MIN_REFINED_WORDS || refined.words < MIN_REFINED_SHARE * chain.words) return undefined;
  // Readability drops inactive tabs, code or tables it scores as layout, and link-heavy callouts ("See
  // also"): content a reader came for. Any such loss keeps the region whole.
  if (droppedProtectedWords(chain.root, refined.root) > 0) return undefined;
  return refined;
}

/** A document holding only `region`, with the page's title and language (Readability reads both). */
function regionDocument(region: Element, sourceDoc: Document): string {
  const title = escapeText(sourceDoc.querySelector('title')?.textContent ?? '');
  const lang = sourceDoc.documentElement?.getAttribute('lang');
  const langAttr = lang ? ` lang="${escapeText(lang).replace(/"/g, '&quot;')}"` : '';
  return `<!DOCTYPE html><html${langAttr}><head><title>${title}</title></head><body>${region.outerHTML}</body></html>`;
}

function escapeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;');
}

/**
 * Readability turns every `h1` into an `h2` and drops one that repeats the page title; the region's
 * own main heading ("Module dataframe") is what the Markdown's H1 should say, not the `<title>`
 * ("peroxide::structure::dataframe - Rust").
 */
function restoreMainHeading(region: Element, refined: Element): void {
  const h1 = region.querySelector('h1');
  const text = squash(h1?.textContent ?? '');
  if (h1 === null || text === '') return;
  for (const heading of Array.from(refined.querySelectorAll('h1, h2'))) {
    if (squash(heading.textContent ?? '') !== text) continue;
    if (heading.localName === 'h2') renameElement(heading, 'h1');
    return;
  }
  const restored = refined.ownerDocument.createElement('h1');
  restored.textContent = text;
  refined.insertBefore(restored, refined.firstChild);
}

const squash = (text: string) => text.replace(/\s+/g, ' ').trim();

const PROTECTED_TAGS = new Set(['pre', 'code', 'table']);

function isProtected(el: Element): boolean {
  if (PROTECTED_TAGS.has(el.localName)) return true;
  const cls = el.getAttribute('class');
  return cls !== null && ADMONITION.test(cls);
}

/** Words of text inside code, tables and callouts under `original` that `refined` no longer holds. */
function droppedProtectedWords(original: Element, refined: Element): number {
  const protectedTexts: string[] = [];
  forEachText(original, (text, inProtected) => {
    if (inProtected) protectedTexts.push(text);
  });
  // Most regions hold no code, table or callout: nothing to look for in Readability's pick.
  if (protectedTexts.length === 0) return 0;
  const kept = new Set<string>();
  forEachText(refined, (text) => kept.add(text));
  let dropped = 0;
  for (const text of protectedTexts) if (!kept.has(text)) dropped += countWords(text);
  return dropped;
}

/**
 * Calls `visit` with each non-blank text node (whitespace collapsed) and whether it lies in code, a
 * table or a callout; iterative, so deep trees are safe.
 */
function forEachText(root: Element, visit: (text: string, inProtected: boolean) => void): void {
  const stack: { node: Node; inProtected: boolean }[] = [{ node: root, inProtected: false }];
  while (stack.length > 0) {
    const { node, inProtected } = stack.pop() as { node: Node; inProtected: boolean };
    if (node.nodeType === 3) {
      const text = squash(node.nodeValue ?? '');
      if (text !== '') visit(text, inProtected);
      continue;
    }
    if (node.nodeType !== 1) continue;
    const childProtected = inProtected || isProtected(node as Element);
    for (let child = node.lastChild; child !== null; child = child.previousSibling) {
      stack.push({ node: child, inProtected: childProtected });
    }
  }
}
