/**
 * The open-tag, text and close-tag events of htmlparser2's `Parser` (HTML mode, lower-cased names,
 * entities decoded), in time linear in the input. The Parser keeps its open-element stack with
 * `unshift`/`shift` and looks end tags up with `indexOf`, so 40,000 unclosed `<div>`s, or stray end
 * tags under deep nesting, cost it quadratic time. Here the stack grows at its end and a count per
 * open name answers "is one open?" at once; each element is pushed and popped once.
 *
 * The tree rules are the Parser's (htmlparser2 12): the tags an opening tag implies closed, void
 * elements, a second `<form>` ignored, `</p>` without a `<p>` opening one, `</br>` as `<br>`, `/>`
 * honoured only in SVG and MathML, SVG's camel-cased names and `<image>` read as `<img>`.
 */
import { Tokenizer, type TokenizerCallbacks } from 'htmlparser2';
import { VOID_ELEMENTS } from './html-void-elements';

export interface HtmlTreeHandler {
  onopentag(name: string, attributes: Readonly<Record<string, string>>): void;
  ontext(text: string): void;
  onclosetag(name: string): void;
}

const FORM_TAGS = new Set(['input', 'option', 'optgroup', 'select', 'button', 'datalist', 'textarea']);
const P_TAG = new Set(['p']);
const HEADING_TAGS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'p']);
const TABLE_SECTION_TAGS = new Set(['thead', 'tbody']);
const DDT_TAGS = new Set(['dd', 'dt']);
const RTP_TAGS = new Set(['rt', 'rp']);
const OPEN_IMPLIES_CLOSE = new Map<string, ReadonlySet<string>>([
  ['tr', new Set(['tr', 'th', 'td'])],
  ['th', new Set(['th'])],
  ['td', new Set(['thead', 'th', 'td'])],
  ['body', new Set(['head', 'link', 'script'])],
  ['a', new Set(['a'])],
  ['li', new Set(['li'])],
  ['p', P_TAG],
  ['h1', HEADING_TAGS],
  ['h2', HEADING_TAGS],
  ['h3', HEADING_TAGS],
  ['h4', HEADING_TAGS],
  ['h5', HEADING_TAGS],
  ['h6', HEADING_TAGS],
  ['select', FORM_TAGS],
  ['input', FORM_TAGS],
  ['output', FORM_TAGS],
  ['button', FORM_TAGS],
  ['datalist', FORM_TAGS],
  ['textarea', FORM_TAGS],
  ['option', new Set(['option'])],
  ['optgroup', new Set(['optgroup', 'option'])],
  ['dd', DDT_TAGS],
  ['dt', DDT_TAGS],
  ...[
    'address',
    'article',
    'aside',
    'blockquote',
    'details',
    'div',
    'dl',
    'fieldset',
    'figcaption',
    'figure',
    'footer',
    'form',
    'header',
    'hr',
    'main',
    'nav',
    'ol',
    'pre',
    'section',
    'table',
    'ul',
  ].map((name): [string, ReadonlySet<string>] => [name, P_TAG]),
  ['rt', RTP_TAGS],
  ['rp', RTP_TAGS],
  ['tbody', TABLE_SECTION_TAGS],
  ['tfoot', TABLE_SECTION_TAGS],
]);
const FOREIGN_ROOTS = new Set(['math', 'svg']);
/** HTML inside SVG or MathML: these names (SVG-cased) open an HTML context again. */
const HTML_INTEGRATION = new Set([
  'mi',
  'mo',
  'mn',
  'ms',
  'mtext',
  'annotation-xml',
  'foreignObject',
  'desc',
  'title',
]);
const SVG_NAMES = new Map(
  [
    'altGlyph',
    'altGlyphDef',
    'altGlyphItem',
    'animateColor',
    'animateMotion',
    'animateTransform',
    'clipPath',
    'feBlend',
    'feColorMatrix',
    'feComponentTransfer',
    'feComposite',
    'feConvolveMatrix',
    'feDiffuseLighting',
    'feDisplacementMap',
    'feDistantLight',
    'feDropShadow',
    'feFlood',
    'feFuncA',
    'feFuncB',
    'feFuncG',
    'feFuncR',
    'feGaussianBlur',
    'feImage',
    'feMerge',
    'feMergeNode',
    'feMorphology',
    'feOffset',
    'fePointLight',
    'feSpecularLighting',
    'feSpotLight',
    'feTile',
    'feTurbulence',
    'foreignObject',
    'glyphRef',
    'linearGradient',
    'radialGradient',
    'textPath',
  ].map((name) => [name.toLowerCase(), name]),
);

enum Context {
  Html = 0,
  Svg = 1,
  MathMl = 2,
}

/** Feeds `html` through the handler as htmlparser2's Parser would; every element that opens also closes. */
export function walkHtmlTree(html: string, handler: HtmlTreeHandler): void {
  const walker = new TreeWalker(html, handler);
  const tokenizer = new Tokenizer({ decodeEntities: true }, walker);
  tokenizer.write(html);
  tokenizer.end();
}

class TreeWalker implements TokenizerCallbacks {
  private readonly stack: string[] = [];
  private readonly openCounts = new Map<string, number>();
  private readonly contexts: Context[] = [Context.Html];
  private tagName = '';
  private attribs: Record<string, string> | null = null;
  private attribName = '';
  private attribValue = '';

  constructor(
    private readonly html: string,
    private readonly handler: HtmlTreeHandler,
  ) {}

  isInForeignContext(): boolean {
    return this.context() !== Context.Html;
  }

  onopentagname(start: number, end: number): void {
    this.openTag(this.readTagName(start, end));
  }

  onattribname(start: number, end: number): void {
    this.attribName = this.html.slice(start, end).toLowerCase();
  }

  onattribdata(start: number, end: number): void {
    this.attribValue += this.html.slice(start, end);
  }

  onattribentity(codepoint: number): void {
    this.attribValue += String.fromCodePoint(codepoint);
  }

  onattribend(): void {
    // The first of duplicate attributes wins.
    if (this.attribs && !Object.hasOwn(this.attribs, this.attribName))
      this.attribs[this.attribName] = this.attribValue;
    this.attribValue = '';
  }

  onopentagend(): void {
    this.endOpenTag();
  }

  onselfclosingtag(): void {
    if (this.isInForeignContext()) this.closeCurrentTag();
    else this.endOpenTag();
  }

  onclosetag(start: number, end: number): void {
    const name = this.readTagName(start, end);
    if (VOID_ELEMENTS.has(name)) {
      if (name === 'br') {
        this.handler.onopentag('br', {});
        this.handler.onclosetag('br');
      }
      return;
    }
    if (this.isOpen(name)) {
      let popped: string | undefined;
      do popped = this.popElement();
      while (popped !== name);
    } else if (name === 'p') {
      this.openTag('p');
      this.closeCurrentTag();
    }
  }

  ontext(start: number, end: number): void {
    this.handler.ontext(this.html.slice(start, end));
  }

  ontextentity(codepoint: number): void {
    this.handler.ontext(String.fromCodePoint(codepoint));
  }

  oncdata(start: number, end: number, offset: number): void {
    // In HTML a CDATA section is a comment, except inside SVG and MathML.
    if (this.isInForeignContext()) this.handler.ontext(this.html.slice(start, end - offset));
  }

  oncomment(): void {}
  ondeclaration(): void {}
  onprocessinginstruction(): void {}

  onend(): void {
    for (let i = this.stack.length - 1; i >= 0; i--) this.handler.onclosetag(this.stack[i] as string);
    this.stack.length = 0;
  }

  private context(): Context {
    return this.contexts[this.contexts.length - 1] ?? Context.Html;
  }

  private isOpen(name: string): boolean {
    return (this.openCounts.get(name) ?? 0) > 0;
  }

  private readTagName(start: number, end: number): string {
    const name = this.html.slice(start, end).toLowerCase();
    if (this.context() === Context.Svg) return SVG_NAMES.get(name) ?? name;
    if (this.contexts.length > 1) {
      // `</foreignObject>` read inside its own HTML content still closes the SVG element.
      const adjusted = SVG_NAMES.get(name);
      if (adjusted !== undefined && this.isOpen(adjusted)) return adjusted;
    }
    if (!this.isInForeignContext()) return name === 'image' ? 'img' : name;
    return name;
  }

  private openTag(name: string): void {
    this.tagName = name;
    if (name === 'form' && this.isOpen('form')) {
      // A second <form> is ignored, attributes and all.
      this.tagName = '';
      this.attribs = null;
      return;
    }
    const impliesClose = OPEN_IMPLIES_CLOSE.get(name);
    if (impliesClose) {
      while (this.stack.length > 0 && impliesClose.has(this.stack[this.stack.length - 1] as string))
        this.popElement();
    }
    if (!VOID_ELEMENTS.has(name)) {
      this.stack.push(name);
      this.openCounts.set(name, (this.openCounts.get(name) ?? 0) + 1);
      if (name === 'svg') this.contexts.push(Context.Svg);
      else if (name === 'math') this.contexts.push(Context.MathMl);
      else if (HTML_INTEGRATION.has(name)) this.contexts.push(Context.Html);
    }
    this.attribs = Object.create(null) as Record<string, string>;
  }

  private endOpenTag(): void {
    if (this.attribs) {
      this.handler.onopentag(this.tagName, this.attribs);
      this.attribs = null;
    }
    if (VOID_ELEMENTS.has(this.tagName)) this.handler.onclosetag(this.tagName);
    this.tagName = '';
  }

  private closeCurrentTag(): void {
    const name = this.tagName;
    this.endOpenTag();
    if (this.stack[this.stack.length - 1] === name) this.popElement();
  }

  private popElement(): string | undefined {
    const name = this.stack.pop();
    if (name === undefined) return undefined;
    this.openCounts.set(name, (this.openCounts.get(name) ?? 1) - 1);
    if (FOREIGN_ROOTS.has(name) || HTML_INTEGRATION.has(name)) this.contexts.pop();
    this.handler.onclosetag(name);
    return name;
  }
}
