/**
 * One depth-first walk over a candidate that removes structural chrome (chrome tags, landmark roles,
 * hidden elements, site headers) and indexes every kept element with its text size, so the chrome
 * rules after it need no selector matching and no repeated `textContent`.
 */

/** Tags that are never document content. */
const CHROME_TAGS = new Set([
  'nav',
  'aside',
  'footer',
  'button',
  'select',
  'input',
  'textarea',
  'svg',
  'iframe',
  'canvas',
  'dialog',
]);
const CHROME_ROLES = new Set(['navigation', 'banner', 'contentinfo', 'complementary', 'search', 'dialog']);
/** Classes of text meant for screen readers or heading permalinks, never for the page's reader. */
const HIDDEN_CLASS = /(?:^|\s)(?:headerlink|visually-hidden|sr-only|screen-reader-text)(?:$|\s)/;

export interface KeptElements {
  /** Elements under the root, in document order. */
  els: Element[];
  /** Index in `els` of the last descendant of each element (itself when it has none). */
  last: number[];
  /** Non-space characters of text under each element. */
  chars: number[];
  /** Non-space characters of text inside links under each element. */
  linkChars: number[];
  /** Whether each element is inside `pre` or `code`. */
  inCode: boolean[];
  rootChars: number;
  /** Characters of text inside links under the root. */
  rootLinkChars: number;
}

/**
 * A `<header>` without the page's h1 is a site or section header, unless it holds most of the text:
 * some site builders wrap a whole post in one.
 */
const MAX_HEADER_SHARE = 0.5;

function isStructuralChrome(el: Element, rootTextLength: () => number): boolean {
  const tag = el.localName;
  if (CHROME_TAGS.has(tag)) return true;
  if (tag === 'header' && el.querySelector('h1') === null) {
    return (el.textContent ?? '').length <= MAX_HEADER_SHARE * rootTextLength();
  }
  const role = el.getAttribute('role');
  // An inactive tab (the same example in another language, another OS's install steps) is hidden
  // only until clicked: its text is content.
  if ((el.hasAttribute('hidden') || el.getAttribute('aria-hidden') === 'true') && role !== 'tabpanel')
    return true;
  if (role !== null && CHROME_ROLES.has(role)) return true;
  const cls = el.getAttribute('class');
  return cls !== null && HIDDEN_CLASS.test(cls);
}

/** Depth-first over `root` by sibling links (no stack to overflow), removing structural chrome on the way. */
export function walkKeptElements(root: Element): KeptElements {
  const els: Element[] = [];
  const last: number[] = [];
  const chars: number[] = [];
  const linkChars: number[] = [];
  const inCode: boolean[] = [];
  let rootChars = 0;
  let rootLinkChars = 0;
  const open: number[] = [];
  let codeDepth = 0;
  let linkDepth = 0;
  const addChars = (n: number, inLink: number) => {
    const parent = open[open.length - 1];
    if (parent === undefined) {
      rootChars += n;
      rootLinkChars += inLink;
      return;
    }
    chars[parent] = (chars[parent] ?? 0) + n;
    linkChars[parent] = (linkChars[parent] ?? 0) + inLink;
  };
  const close = () => {
    const i = open.pop() as number;
    last[i] = els.length - 1;
    const name = (els[i] as Element).localName;
    if (name === 'pre' || name === 'code') codeDepth--;
    else if (name === 'a') linkDepth--;
    addChars(chars[i] ?? 0, linkChars[i] ?? 0);
  };
  /** The next node once `node`'s subtree is done, closing the elements that ends. */
  const after = (node: Node): Node | null => {
    let cur: Node = node;
    for (;;) {
      const sibling = cur.nextSibling;
      if (sibling !== null) return sibling;
      const parent = cur.parentNode;
      if (parent === null || parent === root) return null;
      close();
      cur = parent;
    }
  };
  let rootText = -1;
  const rootTextLength = () => {
    if (rootText < 0) rootText = (root.textContent ?? '').length;
    return rootText;
  };
  let node: Node | null = root.firstChild;
  while (node !== null) {
    if (node.nodeType === 1) {
      const el = node as Element;
      if (isStructuralChrome(el, rootTextLength)) {
        const next = after(el);
        el.remove();
        node = next;
        continue;
      }
      open.push(els.length);
      els.push(el);
      last.push(els.length - 1);
      chars.push(0);
      linkChars.push(0);
      inCode.push(codeDepth > 0);
      if (el.localName === 'pre' || el.localName === 'code') codeDepth++;
      else if (el.localName === 'a') linkDepth++;
      const first = el.firstChild;
      if (first !== null) {
        node = first;
        continue;
      }
      close();
    } else if (node.nodeType === 3) {
      const n = nonSpaceChars(node.nodeValue ?? '');
      addChars(n, linkDepth > 0 ? n : 0);
    }
    node = after(node);
  }
  while (open.length > 0) close();
  return { els, last, chars, linkChars, inCode, rootChars, rootLinkChars };
}

function nonSpaceChars(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c > 32 && c !== 160) n++;
  }
  return n;
}

export function nameOf(el: Element): string {
  const cls = el.getAttribute('class');
  const id = el.getAttribute('id');
  if (cls === null) return id ?? '';
  return id === null ? cls : `${cls} ${id}`;
}
