/**
 * When a page needs a real browser (seed 000's two-tier fetch): heuristics on the HTML a plain
 * fetch returned, and per-origin learning by kind of page so an origin that proved to be a
 * client-rendered app goes straight to the browser, and one whose script-heavy pages render to
 * nothing new stops paying for a browser. Pure: no I/O; the origin workflow holds the learning.
 */
import { walkHtmlTree } from './html-tree-events';

export type RenderMode = 'auto' | 'never' | 'always';
export type FetchTier = 'http' | 'browser';

/** What the plain HTML says about itself. */
export interface HtmlAssessment {
  needsRender: boolean;
  /** Why, in short words (empty when no render is needed). */
  reasons: string[];
  /** Characters of text a reader would see (scripts, styles, templates and noscript left out). */
  visibleTextChars: number;
  /** Characters of inline script. */
  scriptChars: number;
  /** `<script src>` elements. */
  externalScripts: number;
  /** `<a href>` elements: a page that links onward has been rendered by its server. */
  links: number;
}

/** Element ids single-page-app frameworks mount into. */
const APP_ROOT_IDS = new Set(['root', 'app', '__next', '__nuxt', '___gatsby', 'svelte', 'main-app']);
/** Strings only a client-side framework's page carries. */
const FRAMEWORK_MARKERS = [
  '__NEXT_DATA__',
  'window.__NUXT__',
  'ng-version',
  'ng-app',
  'data-reactroot',
  'data-v-app',
  '__sveltekit',
  'data-server-rendered',
];
const NOSCRIPT_ASKS_FOR_JS =
  /(enable|turn on|requires?|need)\b[^.]{0,40}javascript|javascript[^.]{0,40}(required|disabled|enabled)/i;
/**
 * A page showing less text than this, with scripts to load, is a shell. External scripts are not
 * weighed against the text by an assumed size: documentation generators (Sphinx, rustdoc) load
 * several on short reference pages that are complete without them (an allowance of 5,000
 * characters per script flagged 74 of the 156 skopt-0.9 pages).
 */
const SHELL_TEXT_CHARS = 200;
/**
 * Script-based signals need a page that also links almost nowhere: a shell has no navigation of its
 * own until its script runs, while a short generated reference page (rustdoc's `fn.*.html`, Sphinx's
 * API stubs) already carries dozens of links. Without this, 61 of peroxide-docs' 515 pages looked
 * like shells.
 */
const SHELL_MAX_LINKS = 5;
/** Below this much visible text a page is "thin": the heuristics only fire on thin pages. */
const THIN_TEXT_CHARS = 1_500;
const NON_VISIBLE = new Set(['script', 'style', 'noscript', 'template', 'head', 'title']);

/** Seed 000's heuristics: little visible text against much script, an empty app root, `<noscript>` asking for JavaScript, framework markers. */
export function assessHtml(html: string): HtmlAssessment {
  let visibleTextChars = 0;
  let scriptChars = 0;
  let externalScripts = 0;
  let links = 0;
  let refresh = false;
  let noscriptText = '';
  let emptyAppRoot: string | undefined;
  const hidden: string[] = [];
  // Open app roots, each with the element depth where it began and the event count when it opened:
  // a root is filled iff a fill event (any tag or visible text) came after it opened. Keeping one
  // "last fill" number instead of marking every open root keeps this linear with thousands open.
  const roots: Array<{ id: string; depth: number; openedAt: number }> = [];
  let events = 0;
  let lastFill = 0;
  let depth = 0;
  let inScript = false;
  let inNoscript = false;

  walkHtmlTree(html, {
    onopentag(name, attributes) {
      depth++;
      lastFill = ++events;
      if (name === 'script') {
        inScript = true;
        if (attributes.src) externalScripts++;
      }
      if (name === 'a' && attributes.href) links++;
      if (name === 'meta' && attributes['http-equiv']?.toLowerCase() === 'refresh') refresh = true;
      if (name === 'noscript') inNoscript = true;
      if (NON_VISIBLE.has(name)) hidden.push(name);
      const id = attributes.id;
      if (id && APP_ROOT_IDS.has(id)) roots.push({ id, depth, openedAt: events });
    },
    ontext(text) {
      if (inScript) scriptChars += text.length;
      if (inNoscript) noscriptText += text;
      if (hidden.length > 0) return;
      const trimmed = text.replace(/\s+/g, ' ').trim();
      if (trimmed.length === 0) return;
      visibleTextChars += trimmed.length;
      lastFill = ++events;
    },
    onclosetag(name) {
      const root = roots.at(-1);
      if (root && root.depth === depth) {
        roots.pop();
        if (lastFill <= root.openedAt) emptyAppRoot ??= root.id;
      }
      if (name === 'script') inScript = false;
      if (name === 'noscript') inNoscript = false;
      if (hidden.at(-1) === name) hidden.pop();
      depth--;
    },
  });

  const reasons: string[] = [];
  const thin = visibleTextChars < THIN_TEXT_CHARS;
  if (thin && emptyAppRoot) reasons.push(`empty app root #${emptyAppRoot}`);
  const linksNowhere = links < SHELL_MAX_LINKS;
  if (thin && linksNowhere && NOSCRIPT_ASKS_FOR_JS.test(noscriptText))
    reasons.push('<noscript> asks for JavaScript');
  if (thin && linksNowhere && scriptChars > 0 && visibleTextChars / (visibleTextChars + scriptChars) < 0.1)
    reasons.push(`${visibleTextChars} characters of text against ${scriptChars} of script`);
  else if (linksNowhere && externalScripts > 0 && visibleTextChars < SHELL_TEXT_CHARS)
    reasons.push(`${visibleTextChars} characters of text and ${externalScripts} scripts to load`);
  // SSR frameworks ship full text next to their markers: a marker matters only on a near-empty page.
  const marker = FRAMEWORK_MARKERS.find((m) => html.includes(m));
  if (marker && visibleTextChars < 300) reasons.push(`framework marker ${marker} with almost no text`);
  // A meta refresh is a redirect the crawler follows itself; a browser would only do the same.
  if (refresh) reasons.length = 0;
  return { needsRender: reasons.length > 0, reasons, visibleTextChars, scriptChars, externalScripts, links };
}

/**
 * Rendering paid when the browser showed clearly more text than the plain HTML had: half as much
 * again and at least 200 characters more.
 */
export function renderPaid(httpTextChars: number, renderedTextChars: number): boolean {
  return renderedTextChars >= Math.max(httpTextChars * 1.5, httpTextChars + 200);
}

/**
 * The kind of a page, for learning: its first path segment and how many segments it has, so
 * `/app/items/7` and `/app/items/8` are one kind and `/docs/intro.html` another. Query and
 * fragment do not matter.
 */
export function pageKind(url: string): string {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return '?';
  }
  const segments = path.split('/').filter((s) => s.length > 0);
  return `/${segments[0] ?? ''}|${segments.length}`;
}

/** What an origin has learnt about one kind of page. */
export interface KindVerdict {
  tier: FetchTier;
  /** Consecutive observations agreeing with `tier`. */
  confirmations: number;
  /** The verdict came from a render that did (browser) or did not (http) pay, not just heuristics. */
  fromRender: boolean;
  /** Pages of this kind served on the verdict since the last re-check. */
  sinceCheck: number;
}

/** Per-origin learning, keyed by `pageKind`; plain data carried across continue-as-new. */
export type RenderLearning = Record<string, KindVerdict>;

/** Agreeing observations before a kind skips a tier. */
export const RENDER_CONFIRMATIONS = 2;
/** One page in this many of a settled kind is checked the long way, in case the site changed. */
export const RENDER_RECHECK_EVERY = 10;
/** Kinds remembered per origin; later kinds are simply not learnt (history stays small). */
export const MAX_LEARNT_KINDS = 200;

export interface FetchPlan {
  /** The first tier to try. */
  tier: FetchTier;
  /** With tier http: judge the HTML and render if it needs it. */
  assess: boolean;
}

/** Decides the first tier for a URL; advances the re-check counter (call once per page). */
export function planFetch(mode: RenderMode, learning: RenderLearning, url: string): FetchPlan {
  if (mode === 'never') return { tier: 'http', assess: false };
  if (mode === 'always') return { tier: 'browser', assess: false };
  const verdict = learning[pageKind(url)];
  if (verdict?.tier === 'browser' && verdict.confirmations >= RENDER_CONFIRMATIONS) {
    verdict.sinceCheck++;
    if (verdict.sinceCheck < RENDER_RECHECK_EVERY) return { tier: 'browser', assess: false };
    verdict.sinceCheck = 0;
  }
  return { tier: 'http', assess: true };
}

/**
 * After a plain fetch whose HTML looks like it needs a browser: render unless this kind of page
 * has proved, by rendering, that the browser adds nothing (then only every RENDER_RECHECK_EVERY-th).
 */
export function renderAfterFetch(
  learning: RenderLearning,
  url: string,
  assessment: Pick<HtmlAssessment, 'needsRender'>,
): boolean {
  if (!assessment.needsRender) return false;
  const verdict = learning[pageKind(url)];
  if (verdict?.tier !== 'http' || !verdict.fromRender || verdict.confirmations < RENDER_CONFIRMATIONS)
    return true;
  verdict.sinceCheck++;
  if (verdict.sinceCheck < RENDER_RECHECK_EVERY) return false;
  verdict.sinceCheck = 0;
  return true;
}

/** Records one observation: which tier this page really needed, and whether a render showed it. */
export function learnTier(learning: RenderLearning, url: string, tier: FetchTier, fromRender: boolean): void {
  const kind = pageKind(url);
  const verdict = learning[kind];
  if (!verdict) {
    if (Object.keys(learning).length >= MAX_LEARNT_KINDS) return;
    learning[kind] = { tier, confirmations: 1, fromRender, sinceCheck: 0 };
    return;
  }
  if (verdict.tier === tier) {
    verdict.confirmations++;
    verdict.fromRender ||= fromRender;
  } else {
    learning[kind] = { tier, confirmations: 1, fromRender, sinceCheck: 0 };
  }
}
