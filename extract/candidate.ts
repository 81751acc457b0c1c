/**
 * A content candidate and the measures used to choose between candidates: its block text, word count
 * and link density. DOM-only, no I/O; works on jsdom and linkedom alike.
 */

export interface Candidate {
  readonly root: Element;
  readonly strategy: string;
  /** {@link blockText} of `root` when measured. */
  readonly text: string;
  readonly words: number;
  /** Share of the text inside links, 0–1. */
  readonly linkDensity: number;
  /** words × (1 − linkDensity): text that is not navigation. */
  readonly score: number;
}

export function measure(root: Element, strategy: string): Candidate {
  const text = blockText(root);
  const words = countWords(text);
  const linkChars = Array.from(root.querySelectorAll('a')).reduce((n, a) => n + textLength(a), 0);
  const linkDensity = Math.min(1, linkChars / Math.max(1, textLength(root)));
  return { root, strategy, text, words, linkDensity, score: words * (1 - linkDensity) };
}

const BLOCK = new Set([
  'address',
  'article',
  'blockquote',
  'br',
  'dd',
  'div',
  'dl',
  'dt',
  'figcaption',
  'figure',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'hr',
  'li',
  'main',
  'ol',
  'p',
  'pre',
  'section',
  'table',
  'td',
  'th',
  'tr',
  'ul',
]);

/** Text of `root` with a line break at block boundaries; iterative, so deep trees cannot overflow the stack. */
export function blockText(root: Node): string {
  const parts: string[] = [];
  const stack: { node: Node; exit: boolean }[] = [{ node: root, exit: false }];
  while (stack.length > 0) {
    const item = stack.pop();
    if (item === undefined) break;
    const { node } = item;
    if (node.nodeType === 3) {
      parts.push(node.nodeValue ?? '');
      continue;
    }
    if (node.nodeType !== 1 && node.nodeType !== 9 && node.nodeType !== 11) continue;
    const name = (node as Element).localName ?? '';
    const block = BLOCK.has(name);
    if (item.exit) {
      if (block) parts.push('\n');
      continue;
    }
    if (block) parts.push('\n');
    stack.push({ node, exit: true });
    const children = node.childNodes;
    for (let i = children.length - 1; i >= 0; i--) {
      const child = children[i];
      if (child) stack.push({ node: child, exit: false });
    }
  }
  return parts
    .join('')
    .replace(/[ \t\u00a0]+/g, ' ')
    .replace(/ *\n[\n ]*/g, '\n')
    .replace(/\n{2,}/g, '\n\n')
    .trim();
}

export function countWords(text: string): number {
  return text.match(/[\p{L}\p{N}_]+/gu)?.length ?? 0;
}

function textLength(el: Node): number {
  return el.textContent?.replace(/\s+/g, ' ').trim().length ?? 0;
}
