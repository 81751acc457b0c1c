/// <reference path="./turndown-plugin-gfm.d.ts" />
/**
 * Content DOM → GitHub-flavoured Markdown (seed 004 §7, §9) with turndown. Our own rules for what
 * matters most to retrieval: fenced code with its language and its exact text, GFM tables for every
 * table (header-less ones get an empty header row, colspans are repeated as empty cells), absolute
 * links and images, exactly one H1. Nothing is passed through as raw HTML: unknown elements become
 * their text.
 */
import TurndownService from 'turndown';
import { strikethrough, taskListItems } from 'turndown-plugin-gfm';
import { normalizeMarkdown } from './normalize-markdown';

/** Prepares `root` in place: absolute URLs, one H1 (the title when the content has none). */
export function normalizeContent(
  root: Element,
  baseUrl: string | undefined,
  title: string | undefined,
): void {
  if (baseUrl !== undefined) {
    for (const [selector, attr] of [
      ['a[href]', 'href'],
      ['img[src]', 'src'],
    ] as const) {
      for (const el of Array.from(root.querySelectorAll(selector))) {
        const value = el.getAttribute(attr) ?? '';
        try {
          el.setAttribute(attr, new URL(value, baseUrl).href);
        } catch {
          // Leave what cannot be resolved as it is.
        }
      }
    }
  }
  const h1s = Array.from(root.querySelectorAll('h1'));
  for (const extra of h1s.slice(1)) renameElement(extra, 'h2');
  if (h1s.length === 0 && title) {
    const h1 = root.ownerDocument.createElement('h1');
    h1.textContent = title;
    root.insertBefore(h1, root.firstChild);
  }
}

/** Replaces `el` by an element named `name` holding its children (attributes are not kept). */
export function renameElement(el: Element, name: string): void {
  const replacement = el.ownerDocument.createElement(name);
  while (el.firstChild) replacement.appendChild(el.firstChild);
  el.replaceWith(replacement);
}

let service: TurndownService | undefined;

/**
 * Elements turndown is given at most. On linkedom it costs some 40 µs per node (it clones the tree and
 * walks it several times), so a page of 5 MB of dense inline markup would take minutes.
 */
export const MAX_MARKDOWN_ELEMENTS = 20_000;

const INLINE_ELEMENTS = new Set([
  'a',
  'abbr',
  'b',
  'bdi',
  'bdo',
  'cite',
  'code',
  'data',
  'del',
  'dfn',
  'em',
  'font',
  'i',
  'ins',
  'kbd',
  'mark',
  'q',
  's',
  'samp',
  'small',
  'span',
  'strike',
  'strong',
  'sub',
  'sup',
  'time',
  'tt',
  'u',
  'var',
]);

/** Converts `root` (mutating it when it is over the element budget). */
export function toMarkdown(root: Element): string {
  service ??= createService();
  if (!boundElements(root)) {
    // Still over budget with inline markup gone: tens of thousands of blocks. Headings, code and
    // paragraphs of text only, in one linear walk.
    return normalizeMarkdown(plainBlocks(root));
  }
  return normalizeMarkdown(service.turndown(root as unknown as TurndownService.Node));
}

/**
 * Keeps the work bounded: over {@link MAX_MARKDOWN_ELEMENTS}, inline formatting outside code blocks
 * becomes plain text (links and emphasis are what a pathological page loses; its words stay).
 * Returns false when the blocks alone are still over the budget.
 */
function boundElements(root: Element): boolean {
  const all = root.querySelectorAll('*');
  if (all.length <= MAX_MARKDOWN_ELEMENTS) return true;
  // Blocks holding only inline markup get their text in one operation each: replacing elements one
  // by one costs as much as converting them.
  const blocks = new Set<Element>();
  for (const el of Array.from(all)) {
    const parent = el.parentElement;
    if (INLINE_ELEMENTS.has(el.localName) && parent && !INLINE_ELEMENTS.has(parent.localName))
      blocks.add(parent);
  }
  for (const block of blocks) {
    if (block.localName === 'pre' || block.closest('pre')) continue;
    const onlyInline = Array.from(block.children).every(
      (child) => INLINE_ELEMENTS.has(child.localName) || child.localName === 'br',
    );
    if (onlyInline && block.querySelector('pre') === null) block.textContent = block.textContent ?? '';
  }
  return root.querySelectorAll('*').length <= MAX_MARKDOWN_ELEMENTS;
}

const TEXT_BLOCKS = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'dd',
  'div',
  'dl',
  'dt',
  'figcaption',
  'figure',
  'footer',
  'header',
  'li',
  'main',
  'nav',
  'ol',
  'p',
  'section',
  'table',
  'td',
  'th',
  'tr',
  'ul',
]);

/** `root` as headings, fenced code and paragraphs of plain text, without turndown. */
function plainBlocks(root: Element): string {
  const out: string[] = [];
  const stack: (Node | string)[] = [root];
  while (stack.length > 0) {
    const node = stack.pop() as Node | string;
    if (typeof node === 'string') {
      out.push(node);
      continue;
    }
    if (node.nodeType === 3) {
      const text = (node.nodeValue ?? '').replace(/\s+/g, ' ');
      out.push(out[out.length - 1]?.endsWith('\n') ? text.trimStart() : text);
      continue;
    }
    if (node.nodeType !== 1) continue;
    const el = node as Element;
    const name = el.localName;
    if (name === 'pre') {
      out.push(fence(el));
      continue;
    }
    if (name === 'br') out.push('\n');
    const heading = /^h([1-6])$/.exec(name);
    if (heading) {
      out.push(`\n\n${'#'.repeat(Number(heading[1]))} `);
      stack.push('\n\n');
    } else if (TEXT_BLOCKS.has(name)) {
      out.push('\n\n');
      stack.push('\n\n');
    }
    const children = el.childNodes;
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i] as Node);
  }
  return out.join('');
}

function createService(): TurndownService {
  const td = new TurndownService({
    headingStyle: 'atx',
    codeBlockStyle: 'fenced',
    bulletListMarker: '-',
    emDelimiter: '_',
    hr: '---',
  });
  td.use([strikethrough, taskListItems]);
  td.remove(['script', 'style', 'noscript', 'template', 'iframe', 'object', 'embed', 'button', 'form']);
  td.addRule('fencedCode', {
    filter: (node) => node.nodeName === 'PRE',
    replacement: (_content, node) => fence(node as unknown as Element),
  });
  td.addRule('table', {
    filter: (node) => node.nodeName === 'TABLE',
    replacement: (_content, node) => `\n\n${gfmTable(node as unknown as Element, td)}\n\n`,
  });
  td.addRule('permalink', {
    filter: (node) => node.nodeName === 'A' && isPermalink(node as unknown as Element),
    replacement: () => '',
  });
  td.addRule('admonitionTitle', {
    filter: (node) => isAdmonitionTitle(node as unknown as Element),
    replacement: () => '',
  });
  td.addRule('admonition', {
    filter: (node) => isAdmonition(node as unknown as Element),
    replacement: (content, node) => {
      const title = admonitionTitle(node as unknown as Element);
      const body = content.replace(/^\n+|\n+$/g, '');
      const quoted = [title ? `**${title}**` : '', body].filter((part) => part !== '').join('\n\n');
      return `\n\n${quoted.replace(/^/gm, '> ')}\n\n`;
    },
  });
  td.addRule('classifier', {
    // Sphinx field lists put a parameter's type in a span that only CSS separates from its name.
    filter: (node) => node.nodeName === 'SPAN' && hasClass(node as unknown as Element, 'classifier'),
    replacement: (content) => ` : ${content}`,
  });
  td.addRule('image', {
    filter: 'img',
    replacement: (_content, node) => {
      const el = node as unknown as Element;
      const src = el.getAttribute('src') ?? '';
      if (src === '' || src.startsWith('data:')) return '';
      const alt = (el.getAttribute('alt') || figureCaption(el)).replace(/[[\]\s]+/g, ' ').trim();
      return `![${alt}](${src.replace(/[()\s]/g, encodeURIComponent)})`;
    },
  });
  return td;
}

/** A `<pre>` as a fenced block: text exactly as written, language from the nearest `language-x`, `highlight-x`, `lang-x` or `brush: x`. */
function fence(pre: Element): string {
  const code = (pre.textContent ?? '').replace(/\n$/, '');
  const language = codeLanguage(pre);
  const longestRun = Math.max(2, ...(code.match(/`+/g) ?? []).map((run) => run.length));
  const marker = '`'.repeat(longestRun + 1);
  return `\n\n${marker}${language}\n${code}\n${marker}\n\n`;
}

/** Bare class names that name a language on `pre`/`code` (rustdoc's `pre.rust`, some highlighters' `code.python`). */
const BARE_LANGUAGES = new Set([
  'bash',
  'c',
  'cpp',
  'csharp',
  'css',
  'go',
  'html',
  'java',
  'javascript',
  'js',
  'json',
  'kotlin',
  'php',
  'python',
  'ruby',
  'rust',
  'scala',
  'shell',
  'sql',
  'swift',
  'toml',
  'ts',
  'typescript',
  'xml',
  'yaml',
]);

export function codeLanguage(pre: Element): string {
  const classes: string[] = [];
  const code = pre.querySelector('code');
  if (code) classes.push(code.getAttribute('class') ?? '', code.getAttribute('data-lang') ?? '');
  let el: Element | null = pre;
  for (let depth = 0; el && depth < 3; depth++, el = el.parentElement) {
    classes.push(el.getAttribute('class') ?? '', el.getAttribute('data-lang') ?? '');
  }
  for (const value of classes) {
    const match =
      /(?:^|\s)(?:language|lang|highlight|sourceCode)-([\w+#.-]+)/.exec(value) ??
      /brush:\s*([\w+#.-]+)/.exec(value);
    const lang = match?.[1]?.toLowerCase();
    if (lang && !['none', 'default', 'text', 'plain', 'notranslate'].includes(lang)) return lang;
  }
  for (const el of [pre, pre.querySelector('code')]) {
    const bare = (el?.getAttribute('class') ?? '')
      .split(/\s+/)
      .find((c) => BARE_LANGUAGES.has(c.toLowerCase()));
    if (bare) return bare.toLowerCase();
  }
  return '';
}

function hasClass(el: Element, name: string): boolean {
  return (el.getAttribute?.('class') ?? '').split(/\s+/).includes(name);
}

/**
 * Heading permalinks (`¶`, `§`, `#`, 🔗) and symbol-only links to `#`: page furniture, not content.
 * Kept out so headings read as their words and anchors stay stable.
 */
function isPermalink(a: Element): boolean {
  const text = (a.textContent ?? '').trim();
  if (!/^[^\p{L}\p{N}]{0,2}$/u.test(text) || a.querySelector('img, picture')) return false;
  const href = a.getAttribute('href') ?? '';
  if (href === '' || href.endsWith('#')) return true;
  if (/^[¶§#🔗]?$/u.test(text) && href.includes('#')) return true;
  return ['headerlink', 'anchor', 'doc-anchor', 'anchorjs-link', 'hash-link', 'permalink'].some((c) =>
    hasClass(a, c),
  );
}

/** Callout containers: Sphinx/MkDocs `.admonition`, GitHub `.markdown-alert`, Docusaurus `.theme-admonition`. */
function isAdmonition(el: Element): boolean {
  if (!['DIV', 'ASIDE', 'SECTION'].includes(el.nodeName)) return false;
  const classes = (el.getAttribute('class') ?? '').split(/\s+/);
  return classes.some(
    (c) => c === 'admonition' || c === 'markdown-alert' || c === 'theme-admonition' || c === 'callout',
  );
}

const ADMONITION_TITLE_SELECTOR =
  '.admonition-title, .markdown-alert-title, .admonition-heading, [class*="admonitionHeading"], .callout-title';

function isAdmonitionTitle(el: Element): boolean {
  // turndown asks every node: a substring test first keeps selector matching off the hot path.
  const classes = el.getAttribute?.('class') ?? '';
  if (!/admonition|alert-title|callout-title/i.test(classes) || !el.matches(ADMONITION_TITLE_SELECTOR))
    return false;
  const box = el.parentElement?.closest?.('div, aside, section');
  return box !== null && box !== undefined && isAdmonition(box);
}

/** The callout's own title, else its kind from the class (`note`, `warning`), capitalised. */
function admonitionTitle(box: Element): string {
  const titleEl = Array.from(box.querySelectorAll(ADMONITION_TITLE_SELECTOR)).find(
    (el) => el.parentElement?.closest?.('div, aside, section') === box,
  );
  let title = (titleEl?.textContent ?? '').replace(/\s+/g, ' ').trim();
  if (title === '') {
    const kind = (box.getAttribute('class') ?? '')
      .split(/\s+/)
      .map(
        (c) =>
          /^(?:markdown-alert-|theme-admonition-|admonition-)?(note|tip|hint|important|warning|caution|danger|attention|error|info|seealso|todo)$/.exec(
            c,
          )?.[1],
      )
      .find((k) => k !== undefined);
    title = kind ?? '';
  }
  return title === '' ? '' : title[0]?.toUpperCase() + title.slice(1);
}

/** A figure's caption, used as the image's alt text when it has none (`figure > figcaption`, Sphinx `.caption`). */
function figureCaption(img: Element): string {
  const figure = img.closest?.('figure, .figure');
  const caption = figure?.querySelector('figcaption, .caption');
  return caption?.textContent ?? '';
}

/** Every table as a GFM table; nested tables are flattened to their text. */
function gfmTable(table: Element, td: TurndownService): string {
  const rows = Array.from(table.querySelectorAll('tr')).filter((tr) => tr.closest('table') === table);
  const grid = rows.map((tr) =>
    Array.from(tr.children)
      .filter((cell) => cell.localName === 'td' || cell.localName === 'th')
      .flatMap((cell) => {
        const text = cellMarkdown(cell, td);
        const span = Math.min(50, Math.max(1, Number.parseInt(cell.getAttribute('colspan') ?? '1', 10) || 1));
        return [text, ...Array<string>(span - 1).fill('')];
      }),
  );
  const width = Math.max(0, ...grid.map((row) => row.length));
  if (width === 0) return '';
  const pad = (row: string[]) => [...row, ...Array<string>(width - row.length).fill('')];
  const firstRow = rows[0];
  const hasHeader =
    firstRow !== undefined &&
    (firstRow.parentElement?.localName === 'thead' ||
      Array.from(firstRow.children).every((c) => c.localName === 'th'));
  const header = hasHeader ? pad(grid.shift() ?? []) : Array<string>(width).fill('');
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(Array<string>(width).fill('---')), ...grid.map((row) => line(pad(row)))].join(
    '\n',
  );
}

function cellMarkdown(cell: Element, td: TurndownService): string {
  const clone = cell.cloneNode(true) as Element;
  for (const nested of Array.from(clone.querySelectorAll('table, pre'))) {
    nested.replaceWith(clone.ownerDocument.createTextNode(` ${nested.textContent ?? ''} `));
  }
  return td
    .turndown(clone.innerHTML.length > 0 ? (clone as unknown as TurndownService.Node) : ' ')
    .replace(/\s*\n+\s*/g, ' ')
    .replace(/\|/g, '\\|')
    .trim();
}
