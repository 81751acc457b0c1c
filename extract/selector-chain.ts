/**
 * The selector priority chain (seed 004 §6): the first landmark or content container that matches
 * once, cleaned of chrome in place and measured. DOM-only, no I/O.
 */
import { type Candidate, measure } from './candidate';
import { type ChromeOptions, removeChrome } from './remove-chrome';

/**
 * The first selector of the chain that matches exactly one element with enough words after chrome
 * removal. Several matches (a listing's many `<article>` cards) are ambiguous and skipped; the next
 * selector or Readability decides. Chrome is removed in place rather than from a copy: copying the
 * container cost as much as parsing it, and most pages end here. Readability, if it runs next, needs an
 * untouched document (measured: it loses pages whose chrome-like wrappers it would have kept).
 */
export function selectByChain(
  doc: Document,
  selectors: readonly string[],
  minWords: number,
  chrome: ChromeOptions = {},
): ChainResult {
  const simple = matchSimpleSelectors(doc, selectors);
  let mutated = false;
  let short: Candidate | undefined;
  for (const selector of selectors) {
    let matches = simple?.get(selector);
    if (matches === undefined) {
      try {
        matches = Array.from(doc.querySelectorAll(selector));
      } catch {
        continue;
      }
    }
    const match = matches[0];
    if (matches.length !== 1 || match === undefined || !match.isConnected) continue;
    removeChrome(match, chrome);
    mutated = true;
    const candidate = measure(match, `selector:${selector}`);
    if (candidate.words >= minWords) return { candidate, mutated };
    if (short === undefined && candidate.words > 0 && isLandmark(match)) short = candidate;
  }
  return short ? { mutated, short } : { mutated };
}

/** `<main>`, `<article>` or `role="main"`: the page says this is its content, however short. */
function isLandmark(el: Element): boolean {
  return el.localName === 'main' || el.localName === 'article' || el.getAttribute('role') === 'main';
}

export interface ChainResult {
  candidate?: Candidate;
  /** Chrome was removed from the document in place: Readability needs a fresh parse. */
  mutated: boolean;
  /**
   * With no candidate: the first landmark that matched once and had some words, but fewer than
   * `minWords` (a not-found or stub page's `<main>`), cleaned in place.
   */
  short?: Candidate;
}

/** `tag`, `.class`, `#id` or `[attr="value"]`: the shapes of the default chain. */
const SIMPLE_SELECTOR = /^(?:([a-z][a-z0-9-]*)|\.([\w-]+)|#([\w-]+)|\[([\w-]+)="([^"\]]*)"\])$/i;

/**
 * Matches of every simple selector in one walk over the document, instead of one CSS-engine walk per
 * selector (linkedom compiles and runs each `querySelectorAll` afresh). Other selectors are left out of
 * the map and queried the usual way.
 */
function matchSimpleSelectors(doc: Document, selectors: readonly string[]): Map<string, Element[]> {
  const byTag = new Map<string, string[]>();
  const byClass = new Map<string, string[]>();
  const byId = new Map<string, string[]>();
  const byAttr: { selector: string; name: string; value: string }[] = [];
  const result = new Map<string, Element[]>();
  const add = (map: Map<string, string[]>, key: string, selector: string) => {
    const list = map.get(key);
    if (list) list.push(selector);
    else map.set(key, [selector]);
  };
  for (const selector of selectors) {
    const m = SIMPLE_SELECTOR.exec(selector.trim());
    if (!m) continue;
    result.set(selector, []);
    if (m[1]) add(byTag, m[1].toLowerCase(), selector);
    else if (m[2]) add(byClass, m[2], selector);
    else if (m[3]) add(byId, m[3], selector);
    else if (m[4]) byAttr.push({ selector, name: m[4], value: m[5] ?? '' });
  }
  if (result.size === 0) return result;
  const hit = (selectorsHit: string[] | undefined, el: Element) => {
    if (!selectorsHit) return;
    for (const s of selectorsHit) {
      const list = result.get(s);
      if (list && list[list.length - 1] !== el) list.push(el);
    }
  };
  for (const el of allElements(doc)) {
    hit(byTag.get(el.localName), el);
    if (byId.size > 0) {
      const id = el.getAttribute('id');
      if (id) hit(byId.get(id), el);
    }
    if (byClass.size > 0) {
      const cls = el.getAttribute('class');
      if (cls) for (const c of cls.split(/\s+/)) hit(byClass.get(c), el);
    }
    for (const a of byAttr) if (el.getAttribute(a.name) === a.value) result.get(a.selector)?.push(el);
  }
  return result;
}

/** Every element in document order, by sibling links (linkedom's `getElementsByTagName('*')` finds none). */
function allElements(doc: Document): Element[] {
  const out: Element[] = [];
  let el: Element | null = doc.documentElement;
  while (el !== null) {
    out.push(el);
    const child: Element | null = el.firstElementChild;
    if (child !== null) {
      el = child;
      continue;
    }
    while (el !== null && el.nextElementSibling === null) el = el.parentElement;
    el = el?.nextElementSibling ?? null;
  }
  return out;
}
