/**
 * Redirect stubs (issue 27 item 3): a small page whose only job is to send the browser elsewhere,
 * by `<meta http-equiv="refresh">` or a script that sets `location` (rustdoc's "Redirection" pages,
 * moved-page shims). The crawler treats one as a redirect hop — its target is claimed and fetched
 * through the normal path, with robots and SSRF checks — and never indexes the stub itself.
 *
 * Pure and bounded: only a page of at most MAX_STUB_HTML_CHARS is examined, so the patterns below
 * never see more than that.
 */
import { canonicalizeUrl } from './url';

/** A stub is small: a real page that also refreshes (a live-score page) is longer than this. */
export const MAX_STUB_HTML_CHARS = 16_384;
/** A stub says little beyond "redirecting to …". */
export const MAX_STUB_TEXT_CHARS = 300;

export interface RedirectStub {
  /** Canonical absolute target. */
  target: string;
  via: 'meta-refresh' | 'script-location';
}

const SCRIPT = /<script\b[^>]*>([^<]*(?:<(?!\/script)[^<]*)*)<\/script\s*>/gi;
/** `location = "…"`, `location.href = "…"`, `window.location.replace("…")`, `.assign("…")`. */
const LOCATION_SET =
  /\b(?:window\.|document\.|self\.|top\.)?location(?:\.href)?\s*=\s*(["'])([^"'\n]{1,2000})\1|\blocation\.(?:replace|assign)\(\s*(["'])([^"'\n]{1,2000})\3/;

/**
 * The page's redirect target when it is a stub: a meta refresh target (`metaRefreshUrl` from link
 * extraction) or a literal script location, on a small page with little text. Undefined otherwise.
 */
export function detectRedirectStub(
  html: string,
  pageUrl: string,
  metaRefreshUrl: string | undefined,
): RedirectStub | undefined {
  if (html.length > MAX_STUB_HTML_CHARS) return undefined;
  let scriptTarget: string | undefined;
  for (const match of html.matchAll(SCRIPT)) {
    const found = LOCATION_SET.exec(match[1] ?? '');
    const raw = found?.[2] ?? found?.[4];
    if (raw) {
      scriptTarget = resolve(raw, pageUrl);
      if (scriptTarget) break;
    }
  }
  const target = metaRefreshUrl ?? scriptTarget;
  if (!target || target === canonicalizeUrl(pageUrl)) return undefined;
  if (visibleText(html).length > MAX_STUB_TEXT_CHARS) return undefined;
  return { target, via: metaRefreshUrl ? 'meta-refresh' : 'script-location' };
}

function resolve(raw: string, base: string): string | undefined {
  try {
    const url = new URL(raw.trim(), base);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    return canonicalizeUrl(url.href) ?? undefined;
  } catch {
    return undefined;
  }
}

/** The page's text outside head, scripts, styles and tags, whitespace collapsed. */
function visibleText(html: string): string {
  return html
    .replace(/<head\b[\s\S]*?<\/head\s*>/i, ' ')
    .replace(/<(script|style|noscript|template)\b[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}
