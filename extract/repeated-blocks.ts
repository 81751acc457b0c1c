/**
 * Pages whose content is many alike blocks rather than one node: forum threads (one container per
 * post), listings and collections (one card per item), service pages (one section per offer).
 * Readability keeps the single best-scoring block, so it returns one post or one card. This finds the
 * parent whose children repeat one structure (same tag and first class) and carry the most words, and
 * hands back that parent so every post or card is kept. Generic structure only; no site names.
 */
import { countWords } from './candidate';

/** Child elements that can be the repeated unit. Paragraph runs are Readability's job. */
const UNIT_TAGS = new Set(['div', 'article', 'section', 'li', 'tr', 'dl', 'details', 'blockquote', 'figure']);
/** Units that are each a whole piece of content; two of them already make a thread. */
const STANDALONE_TAGS = new Set(['article', 'section']);
const MIN_UNITS = 3;
/** Menus repeat too; their items are one or two words. */
const MIN_MEAN_UNIT_WORDS = 5;
/** Words in links count at this weight: a card's title is a link and is content, a menu is all links. */
const LINK_WORD_WEIGHT = 0.5;

export interface RepeatedGroup {
  /** The parent of the repeated units. */
  container: Element;
  /** `tag.class` shared by the units. */
  signature: string;
  units: number;
  words: number;
  /** words − LINK_WORD_WEIGHT × words inside links. */
  score: number;
}

interface Counts {
  words: number;
  linkWords: number;
}

export interface GroupOptions {
  /** Ignore units named as comments: under an article they are readers' comments, not the content. */
  skipComments?: boolean;
}

const COMMENT_UNIT = /comment/i;

/** The highest-scoring group of repeated children under `root`, or undefined. One pass over the tree. */
export function findRepeatedGroup(root: Element, options: GroupOptions = {}): RepeatedGroup | undefined {
  const counts = countSubtrees(root);
  let best: RepeatedGroup | undefined;
  const stack: Element[] = [root];
  while (stack.length > 0) {
    const parent = stack.pop();
    if (parent === undefined) break;
    const children = Array.from(parent.children);
    for (const child of children) stack.push(child);
    if (children.length < 2) continue;
    const groups = new Map<string, Element[]>();
    for (const child of children) {
      const tag = child.localName;
      if (!UNIT_TAGS.has(tag)) continue;
      if (options.skipComments && COMMENT_UNIT.test(child.getAttribute('class') ?? '')) continue;
      const signature = `${tag}.${firstClass(child)}`;
      const group = groups.get(signature);
      if (group) group.push(child);
      else groups.set(signature, [child]);
    }
    for (const [signature, units] of groups) {
      const tag = signature.slice(0, signature.indexOf('.'));
      if (units.length < (STANDALONE_TAGS.has(tag) ? 2 : MIN_UNITS)) continue;
      let words = 0;
      let linkWords = 0;
      let substantial = 0;
      for (const unit of units) {
        const c = counts.get(unit);
        if (!c) continue;
        words += c.words;
        linkWords += c.linkWords;
        if (c.words >= 2) substantial++;
      }
      if (words / units.length < MIN_MEAN_UNIT_WORDS || substantial < 0.6 * units.length) continue;
      const score = words - LINK_WORD_WEIGHT * linkWords;
      if (best === undefined || score > best.score) {
        best = { container: parent, signature, units: units.length, words, score };
      }
    }
  }
  return best;
}

function firstClass(el: Element): string {
  const cls = el.getAttribute('class');
  if (!cls) return '';
  // Numbered variants (`post-123`, `col-4`) are the same unit.
  return (cls.trim().split(/\s+/)[0] ?? '').replace(/\d+/g, '#');
}

/** Words and words-inside-links of every element's subtree, bottom-up and iterative. */
function countSubtrees(root: Element): Map<Element, Counts> {
  const counts = new Map<Element, Counts>();
  const stack: { el: Element; exit: boolean }[] = [{ el: root, exit: false }];
  while (stack.length > 0) {
    const item = stack.pop();
    if (item === undefined) break;
    const { el } = item;
    if (!item.exit) {
      stack.push({ el, exit: true });
      for (const child of Array.from(el.children)) stack.push({ el: child, exit: false });
      continue;
    }
    let words = 0;
    let linkWords = 0;
    for (const node of Array.from(el.childNodes)) {
      if (node.nodeType === 3) {
        const n = countWords(node.nodeValue ?? '');
        words += n;
        if (el.localName === 'a') linkWords += n;
      } else if (node.nodeType === 1) {
        const c = counts.get(node as Element);
        if (!c) continue;
        words += c.words;
        linkWords += el.localName === 'a' ? c.words : c.linkWords;
      }
    }
    counts.set(el, { words, linkWords });
  }
  return counts;
}
