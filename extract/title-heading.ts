/**
 * Readability takes a page's only `<h1>` for the article title when the `<title>` is under 15 or over
 * 150 characters ("Café", "Home"), then drops that `<h1>` from its pick as a repeat of the title. Our
 * Markdown's H1 comes from the `<title>`, so the heading's words ("Café opening hours and menu") were
 * lost; a short heading it kept ("Shift JIS") sat as an H2 under the `<title>` ("SJIS"), and chunks
 * were filed under the title. `noteSoleHeading` reads the heading before Readability rewrites the
 * document; `restoreSoleHeading` makes it the pick's H1 again.
 */

import { renameElement } from './markdown';

/** Readability's bounds (0.6 `_getArticleTitle`): a `<title>` outside them gives way to the only `<h1>`. */
const MIN_TITLE_CHARS = 15;
const MAX_TITLE_CHARS = 150;
/** Characters of each following block compared with the pick. */
const FOLLOWING_SAMPLE_CHARS = 40;
/** Blocks after the heading looked at: a byline or date Readability drops may come first. */
const FOLLOWING_BLOCKS = 3;

export interface SoleHeading {
  /** The heading's text, whitespace collapsed. */
  readonly text: string;
  /** The first characters (whitespace removed) of the blocks that follow the heading. */
  readonly following: readonly string[];
}

/**
 * The document's one `<h1>` and what follows it, when the `<title>` is one Readability gives up for it
 * (under 15 or over 150 characters) and does not already say it. Undefined otherwise: a title of a
 * sensible length heads the Markdown as a headline of its own ("Tutoring Sessions | Penn State").
 */
export function noteSoleHeading(doc: Document): SoleHeading | undefined {
  const headings = doc.querySelectorAll('h1');
  const heading = headings.length === 1 ? headings[0] : undefined;
  if (heading === undefined) return undefined;
  const text = collapse(heading.textContent ?? '');
  if (text === '') return undefined;
  const title = collapse(doc.querySelector('title')?.textContent ?? '');
  if (title.length >= MIN_TITLE_CHARS && title.length <= MAX_TITLE_CHARS) return undefined;
  if (squash(title).toLowerCase().includes(squash(text).toLowerCase())) return undefined;
  const following: string[] = [];
  let node: Node | null = heading;
  while (node !== null && following.length < FOLLOWING_BLOCKS) {
    while (node !== null && node.nextSibling === null) node = node.parentNode;
    if (node === null) break;
    node = node.nextSibling as Node;
    const sample = squash(node.textContent ?? '').slice(0, FOLLOWING_SAMPLE_CHARS);
    if (sample !== '') following.push(sample);
  }
  return { text, following };
}

/**
 * Puts `heading` back as the first element of Readability's `pick` when Readability took it for its
 * title (`articleTitle`), no heading of the pick says it, and the pick holds what followed it on the
 * page: it stood at the top of this content, not in a header or banner elsewhere. When the pick kept
 * it as its first heading, demoted to `<h2>`, it becomes the `<h1>` again.
 */
export function restoreSoleHeading(pick: Element, heading: SoleHeading, articleTitle: string): void {
  const kept = Array.from(pick.querySelectorAll('h1, h2, h3, h4, h5, h6'));
  const same = kept.findIndex((el) => collapse(el.textContent ?? '') === heading.text);
  if (same !== -1) {
    // Kept but turned into an `<h2>` (as Readability does with every `<h1>`) at the top: it is the
    // page's main heading, not a section under the short `<title>` the Markdown would put above it.
    const el = kept[same] as Element;
    if (same === 0 && el.localName === 'h2') renameElement(el, 'h1');
    return;
  }
  if (collapse(articleTitle) !== heading.text) return;
  const pickText = squash(pick.textContent ?? '');
  if (!heading.following.some((sample) => pickText.includes(sample))) return;
  const restored = pick.ownerDocument.createElement('h1');
  restored.textContent = heading.text;
  pick.insertBefore(restored, pick.firstChild);
}

const collapse = (text: string) => text.replace(/\s+/g, ' ').trim();
const squash = (text: string) => text.replace(/\s+/g, '');
