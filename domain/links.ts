/**
 * Link extraction from HTML: outgoing links with anchor text, the page's canonical link,
 * `<base href>`, title, meta robots and meta refresh.
 *
 * Built on htmlparser2's `Tokenizer` rather than its `Parser`: the Parser keeps an open-element
 * stack that it `unshift`s and scans with `indexOf`, which is quadratic on deeply nested or
 * unclosed markup (160k nested `<div>`s take over a minute). Links need no tree, only a few
 * flags and counters, so this stays linear in the input and uses no recursion.
 */
import { Tokenizer, type TokenizerCallbacks } from 'htmlparser2';
import { canonicalizeUrl, InvalidUrlError, normalizePercentEncoding } from './url';

/** One outgoing link of a page. */
export interface ExtractedLink {
  /** Canonical absolute URL ({@link canonicalizeUrl}). */
  url: string;
  /** Whitespace-collapsed text, at most {@link MAX_ANCHOR_TEXT_CHARS} characters; '' when none. */
  anchorText: string;
  /** Lower-cased `rel` tokens separated by single spaces; '' when none. */
  rel: string;
  /** True when `rel` contains nofollow, ugc or sponsored. */
  nofollow: boolean;
  /** The element the link came from. */
  tag: 'a' | 'area' | 'link';
  /** The link's `hreflang`, trimmed, when it names one: a language alternate (`--lang` skips others). */
  hreflang?: string;
  /**
   * The absolute URL as the page wrote it (no fragment), when its path or query differs from `url`'s
   * beyond what robots.txt matching ignores: query parameters sorted or dropped, a `;jsessionid`
   * removed. robots.txt is asked about this form too (`/search?q=x&page=2` under `Disallow: /search?q=`
   * must not be fetched as the allowed `/search?page=2&q=x`).
   */
  asWritten?: string;
}

/** Everything {@link extractLinks} finds in one page. */
export interface LinkExtraction {
  /** Links in document order; the first occurrence of each (url, anchorText) pair. */
  links: ExtractedLink[];
  /** Canonical form of the first `<link rel="canonical">`, when present and valid. */
  canonicalUrl?: string;
  /** Canonical form of the URL relative links were resolved against: the first valid `<base href>`, else the page URL. */
  baseUrl: string;
  /** Whitespace-collapsed text of the first `<title>` outside SVG, at most 1,000 characters. */
  title?: string;
  /** Directives of `<meta name="robots">` (`none` sets both). */
  metaRobots: { noindex: boolean; nofollow: boolean };
  /** Canonical target of the first `<meta http-equiv="refresh">` that names one. */
  metaRefreshUrl?: string;
  /** Set when links beyond `maxLinks` were dropped. */
  truncated?: true;
}

/** Options of {@link extractLinks}. */
export interface ExtractLinksOptions {
  /** Links kept per page; later ones are dropped and `truncated` is set. @default 10000 */
  maxLinks?: number;
}

export const MAX_ANCHOR_TEXT_CHARS = 500;
const MAX_TITLE_CHARS = 1000;
const DEFAULT_MAX_LINKS = 10_000;

/** `<link rel>` values whose targets are pages worth crawling (pagination, alternates). */
export const FOLLOWED_LINK_RELS: readonly string[] = ['alternate', 'next', 'prev', 'previous'];

const NOFOLLOW_RELS = new Set(['nofollow', 'ugc', 'sponsored']);
const SKIPPED_SCHEMES = /^(?:javascript|mailto|tel|data|vbscript):/i;
/** Elements whose content is not part of the rendered page for a crawler. */
const SKIPPED_CONTAINERS = new Set(['template', 'noscript']);
/** Elements the tokenizer reads as raw text; their text is never anchor text. */
const RAW_TEXT = new Set([
  'script',
  'style',
  'xmp',
  'iframe',
  'noembed',
  'noframes',
  'textarea',
  'title',
  'plaintext',
]);
const FOREIGN_ROOTS = new Set(['svg', 'math']);
/** Elements that separate words, so `<a><div>A</div><div>B</div></a>` reads "A B". */
const WORD_BREAKS = new Set(['br', 'p', 'div', 'li', 'td', 'th', 'tr', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6']);

/**
 * Extracts links and link-related metadata from an HTML page fetched from `pageUrl`.
 * Tolerates any malformed markup; linear in the input size. Throws {@link InvalidUrlError}
 * when `pageUrl` is not an http(s) URL. Form actions are never links.
 */
export function extractLinks(
  html: string,
  pageUrl: string,
  options: ExtractLinksOptions = {},
): LinkExtraction {
  if (canonicalizeUrl(pageUrl) === null) throw new InvalidUrlError(pageUrl);
  const collector = new Collector(html);
  const tokenizer = new Tokenizer({ decodeEntities: true }, collector);
  tokenizer.write(html);
  tokenizer.end();
  return resolve(collector, pageUrl, options.maxLinks ?? DEFAULT_MAX_LINKS);
}

interface RawLink {
  href: string;
  anchorText: string;
  rel: string;
  tag: ExtractedLink['tag'];
  hreflang?: string;
}

interface PendingAnchor {
  href: string;
  rel: string;
  hreflang: string;
  text: CollapsedText;
  imgAlt: string;
  fallbacks: string[];
}

/** Turns the raw hrefs into canonical URLs once the whole document (and so its base) is known. */
function resolve(found: Collector, pageUrl: string, maxLinks: number): LinkExtraction {
  const base = effectiveBase(found.baseHref, pageUrl);
  const result: LinkExtraction = {
    links: [],
    baseUrl: canonicalizeUrl(base) as string,
    metaRobots: found.metaRobots,
  };
  const seen = new Set<string>();
  for (const raw of found.links) {
    const url = resolveHref(raw.href, base);
    const key = `${url}\u0000${raw.anchorText}`;
    if (url === null || seen.has(key)) continue;
    if (result.links.length >= maxLinks) {
      result.truncated = true;
      break;
    }
    seen.add(key);
    const nofollow = raw.rel.split(' ').some((token) => NOFOLLOW_RELS.has(token));
    const asWritten = writtenForm(raw.href, base, url);
    result.links.push({
      url,
      anchorText: raw.anchorText,
      rel: raw.rel,
      nofollow,
      tag: raw.tag,
      ...(raw.hreflang ? { hreflang: raw.hreflang } : {}),
      ...(asWritten ? { asWritten } : {}),
    });
  }
  const canonical = found.canonicalHref === undefined ? null : resolveHref(found.canonicalHref, base);
  if (canonical !== null) result.canonicalUrl = canonical;
  const refresh = found.refreshHref === undefined ? null : resolveHref(found.refreshHref, base);
  if (refresh !== null) result.metaRefreshUrl = refresh;
  if (found.title !== undefined && found.title.value() !== '') result.title = found.title.value();
  return result;
}

function effectiveBase(baseHref: string | undefined, pageUrl: string): string {
  if (baseHref === undefined) return pageUrl;
  try {
    const base = new URL(baseHref.trim(), pageUrl);
    if (canonicalizeUrl(base.href) !== null) return base.href;
  } catch {
    // An unusable <base> is ignored, as browsers do.
  }
  return pageUrl;
}

/**
 * The link as written, absolute and without its fragment, when canonicalisation changed its query or
 * path parameters; undefined otherwise. Only an href with a `?` or `;` can differ that way (the rest
 * of canonicalisation — case of scheme and host, default port, escapes of unreserved characters, dot
 * segments — is what robots.txt matching ignores or the URL parser does anyway).
 */
function writtenForm(href: string, base: string, canonical: string): string | undefined {
  if (!href.includes('?') && !href.includes(';')) return undefined;
  let written: URL;
  try {
    written = new URL(href.trim(), base);
  } catch {
    return undefined;
  }
  written.hash = '';
  const target = new URL(canonical);
  const pathAndQuery = (url: URL) => `${url.pathname}${url.search === '?' ? '' : url.search}`;
  return normalizePercentEncoding(pathAndQuery(written)) === normalizePercentEncoding(pathAndQuery(target))
    ? undefined
    : written.href;
}

function resolveHref(href: string, base: string): string | null {
  const trimmed = href.trim();
  if (trimmed === '' || trimmed.startsWith('#') || SKIPPED_SCHEMES.test(trimmed)) return null;
  return canonicalizeUrl(trimmed, base);
}

/** Tokenizer callbacks holding only the state links need: no element stack. */
class Collector implements TokenizerCallbacks {
  readonly links: RawLink[] = [];
  readonly metaRobots = { noindex: false, nofollow: false };
  baseHref: string | undefined;
  canonicalHref: string | undefined;
  refreshHref: string | undefined;
  title: CollapsedText | undefined;

  private tagName = '';
  private attribs = new Map<string, string>();
  private attribName = '';
  private attribValue = '';
  private skipDepth = 0;
  private foreignDepth = 0;
  private rawText: string | undefined;
  private anchor: PendingAnchor | undefined;

  constructor(private readonly html: string) {}

  onopentagname(start: number, end: number): void {
    this.tagName = this.html.slice(start, end).toLowerCase();
    this.attribs = new Map();
  }

  onattribname(start: number, end: number): void {
    this.attribName = this.html.slice(start, end).toLowerCase();
    this.attribValue = '';
  }

  onattribdata(start: number, end: number): void {
    this.attribValue += this.html.slice(start, end);
  }

  onattribentity(codepoint: number): void {
    this.attribValue += String.fromCodePoint(codepoint);
  }

  onattribend(): void {
    // The first of duplicate attributes wins, as in browsers.
    if (!this.attribs.has(this.attribName)) this.attribs.set(this.attribName, this.attribValue);
    this.attribValue = '';
  }

  onopentagend(): void {
    this.openTag(this.tagName, this.attribs);
  }

  onselfclosingtag(): void {
    this.openTag(this.tagName, this.attribs);
    // HTML ignores `/>` except on foreign elements, where it really closes the element.
    if (this.foreignDepth > 0) this.closeTag(this.tagName);
  }

  onclosetag(start: number, end: number): void {
    this.closeTag(this.html.slice(start, end).toLowerCase());
  }

  ontext(start: number, end: number): void {
    this.text(this.html.slice(start, end));
  }

  ontextentity(codepoint: number): void {
    this.text(String.fromCodePoint(codepoint));
  }

  isInForeignContext(): boolean {
    return this.foreignDepth > 0;
  }

  onend(): void {
    this.finishAnchor();
  }

  oncdata(): void {}
  oncomment(): void {}
  ondeclaration(): void {}
  onprocessinginstruction(): void {}

  private openTag(name: string, attribs: Map<string, string>): void {
    if (SKIPPED_CONTAINERS.has(name)) this.skipDepth++;
    if (FOREIGN_ROOTS.has(name)) this.foreignDepth++;
    if (this.skipDepth > 0) return;
    if (RAW_TEXT.has(name) && this.foreignDepth === 0) this.rawText = name;
    if (name === 'title' && this.foreignDepth === 0 && this.title === undefined) {
      this.title = new CollapsedText(MAX_TITLE_CHARS);
    }
    if (WORD_BREAKS.has(name)) this.anchor?.text.append(' ');
    this.element(name, attribs);
  }

  private element(name: string, attribs: Map<string, string>): void {
    if (name === 'a') this.startAnchor(attribs);
    else if (name === 'area') this.addLink(attribs, 'area', attribs.get('alt') ?? '');
    else if (name === 'img') this.imageInAnchor(attribs);
    else if (name === 'link') this.linkElement(attribs);
    else if (name === 'base' && this.baseHref === undefined) this.baseHref = attribs.get('href');
    else if (name === 'meta') this.meta(attribs);
  }

  private imageInAnchor(attribs: Map<string, string>): void {
    if (this.anchor && this.anchor.imgAlt === '') this.anchor.imgAlt = attribs.get('alt') ?? '';
  }

  private closeTag(name: string): void {
    if (SKIPPED_CONTAINERS.has(name) && this.skipDepth > 0) this.skipDepth--;
    if (FOREIGN_ROOTS.has(name) && this.foreignDepth > 0) this.foreignDepth--;
    if (name === this.rawText) this.rawText = undefined;
    if (name === 'title') this.title?.close();
    if (name === 'a') this.finishAnchor();
    else if (WORD_BREAKS.has(name)) this.anchor?.text.append(' ');
  }

  private text(chunk: string): void {
    if (this.skipDepth > 0) return;
    if (this.rawText === 'title') this.title?.appendUntilClosed(chunk);
    else if (this.rawText === undefined) this.anchor?.text.append(chunk);
  }

  private startAnchor(attribs: Map<string, string>): void {
    // An <a> start tag closes any open <a> (HTML's adoption agency), so anchors never nest.
    this.finishAnchor();
    const href = attribs.get('href') ?? attribs.get('xlink:href');
    if (href === undefined) return;
    const fallbacks = [attribs.get('aria-label') ?? '', attribs.get('title') ?? ''];
    this.anchor = {
      href,
      rel: relTokens(attribs),
      hreflang: hreflangOf(attribs),
      text: new CollapsedText(MAX_ANCHOR_TEXT_CHARS),
      imgAlt: '',
      fallbacks,
    };
  }

  private finishAnchor(): void {
    const anchor = this.anchor;
    if (anchor === undefined) return;
    this.anchor = undefined;
    const candidates = [anchor.text.value(), anchor.imgAlt, ...anchor.fallbacks];
    const anchorText = candidates
      .map((text) => collapse(text, MAX_ANCHOR_TEXT_CHARS))
      .find((text) => text !== '');
    this.links.push({
      href: anchor.href,
      anchorText: anchorText ?? '',
      rel: anchor.rel,
      tag: 'a',
      ...(anchor.hreflang ? { hreflang: anchor.hreflang } : {}),
    });
  }

  private addLink(attribs: Map<string, string>, tag: ExtractedLink['tag'], text: string): void {
    const href = attribs.get('href');
    if (href === undefined) return;
    this.links.push({
      href,
      anchorText: collapse(text, MAX_ANCHOR_TEXT_CHARS),
      rel: relTokens(attribs),
      tag,
      ...(hreflangOf(attribs) ? { hreflang: hreflangOf(attribs) } : {}),
    });
  }

  private linkElement(attribs: Map<string, string>): void {
    const rels = relTokens(attribs).split(' ');
    if (rels.includes('canonical')) {
      if (this.canonicalHref === undefined && attribs.has('href')) this.canonicalHref = attribs.get('href');
      return;
    }
    const type = (attribs.get('type') ?? 'text/html').trim().toLowerCase();
    const isPage = type === 'text/html' || type === 'application/xhtml+xml';
    const followed = rels.some((rel) => FOLLOWED_LINK_RELS.includes(rel)) && !rels.includes('stylesheet');
    if (followed && isPage) this.addLink(attribs, 'link', attribs.get('title') ?? '');
  }

  private meta(attribs: Map<string, string>): void {
    const content = attribs.get('content') ?? '';
    if ((attribs.get('name') ?? '').trim().toLowerCase() === 'robots') {
      const directives = content.toLowerCase().split(/[\s,]+/);
      if (directives.includes('noindex') || directives.includes('none')) this.metaRobots.noindex = true;
      if (directives.includes('nofollow') || directives.includes('none')) this.metaRobots.nofollow = true;
    }
    if (
      (attribs.get('http-equiv') ?? '').trim().toLowerCase() === 'refresh' &&
      this.refreshHref === undefined
    ) {
      this.refreshHref = parseRefreshUrl(content);
    }
  }
}

/**
 * The URL of a meta refresh `content` such as `0; url='/next'`, following the HTML standard's
 * shared declarative refresh steps loosely; undefined when it only reloads the page.
 */
export function parseRefreshUrl(content: string): string | undefined {
  const match = /^\s*[\d.]+\s*[;,]?\s*(?:url\s*=\s*)?([\s\S]*)$/i.exec(content);
  let url = match?.[1]?.trim() ?? '';
  const quote = url[0];
  if (quote === '"' || quote === "'") {
    const end = url.indexOf(quote, 1);
    url = end === -1 ? url.slice(1) : url.slice(1, end);
  }
  url = url.trim();
  return url === '' ? undefined : url;
}

function hreflangOf(attribs: Map<string, string>): string {
  return (attribs.get('hreflang') ?? '').trim().slice(0, 35);
}

function relTokens(attribs: Map<string, string>): string {
  return collapse((attribs.get('rel') ?? '').toLowerCase(), Number.POSITIVE_INFINITY);
}

function collapse(text: string, maxChars: number): string {
  return text.replace(/\s+/g, ' ').trim().slice(0, maxChars).trimEnd();
}

/** Text collected chunk by chunk with whitespace collapsed on the fly and a hard length cap. */
class CollapsedText {
  private text = '';
  private closed = false;

  constructor(private readonly maxChars: number) {}

  append(chunk: string): void {
    // One spare character lets value() see a trailing word boundary before cutting.
    const room = this.maxChars + 1 - this.text.length;
    if (room <= 0) return;
    let collapsed = chunk.replace(/\s+/g, ' ');
    if (collapsed.startsWith(' ') && (this.text === '' || this.text.endsWith(' ')))
      collapsed = collapsed.slice(1);
    this.text += collapsed.slice(0, room);
  }

  /** Appends only until the element ends once; used for the first <title> only. */
  appendUntilClosed(chunk: string): void {
    if (!this.closed) this.append(chunk);
  }

  close(): void {
    this.closed = true;
  }

  value(): string {
    return this.text.trim().slice(0, this.maxChars).trimEnd();
  }
}
