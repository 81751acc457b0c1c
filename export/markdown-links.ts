/**
 * Finds and rewrites the link and image destinations of a page's Markdown (as gleaner's extractor
 * writes it: inline `[text](url "title")`, `![alt](url)`, images nested in links, `<url>`
 * autolinks). Fenced code blocks and inline code are left alone: a URL there is text, not a link.
 */

export interface LinkTarget {
  /** Absolute URL (resolved against the page's URL). */
  readonly url: string;
  readonly image: boolean;
}

/** Returns the new destination for a link or image, or undefined to keep it as it is. */
export type RewriteDestination = (target: LinkTarget) => string | undefined;

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
// An inline link or image. The text may hold escaped characters and whole images (badges inside
// links); the destination may hold one level of balanced parentheses; an optional "title" follows.
const INLINE_LINK =
  /(!?)\[((?:\\.|!\[(?:\\.|[^\]\\])*\]\((?:[^()\s]|\([^()]*\))*(?:\s+"[^"]*")?\)|[^\]\\])*)\]\((<[^>\n]*>|(?:[^()\s]|\([^()]*\))*)(\s+"(?:\\.|[^"\\])*")?\)/g;
const AUTOLINK = /<(https?:\/\/[^>\s]+)>/g;
const INLINE_CODE = /(`+)[^`]*?\1/g;

/** Rewrites every link and image destination `rewrite` answers for; `baseUrl` resolves relative ones. */
export function rewriteMarkdownLinks(markdown: string, baseUrl: string, rewrite: RewriteDestination): string {
  return mapOutsideCode(markdown, (text) => rewriteInline(text, baseUrl, rewrite));
}

/** Every link and image target of the Markdown, in order of appearance. */
export function markdownTargets(markdown: string, baseUrl: string): LinkTarget[] {
  const found: LinkTarget[] = [];
  rewriteMarkdownLinks(markdown, baseUrl, (target) => {
    found.push(target);
    return undefined;
  });
  return found;
}

function rewriteInline(text: string, baseUrl: string, rewrite: RewriteDestination): string {
  const linked = text.replace(
    INLINE_LINK,
    (whole, bang: string, inner: string, rawDest: string, title: string | undefined) => {
      const innerRewritten = bang ? inner : rewriteInline(inner, baseUrl, rewrite);
      const dest = rawDest.startsWith('<') ? rawDest.slice(1, -1) : rawDest;
      const absolute = resolve(dest, baseUrl);
      const replaced = absolute === undefined ? undefined : rewrite({ url: absolute, image: bang === '!' });
      if (replaced === undefined && innerRewritten === inner) return whole;
      return `${bang}[${innerRewritten}](${replaced ?? rawDest}${title ?? ''})`;
    },
  );
  return linked.replace(AUTOLINK, (whole, url: string) => {
    const replaced = rewrite({ url, image: false });
    return replaced === undefined ? whole : `[${url}](${replaced})`;
  });
}

function resolve(dest: string, baseUrl: string): string | undefined {
  if (dest === '' || dest.startsWith('#')) return undefined;
  try {
    const url = new URL(dest, baseUrl);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/** Applies `fn` to the Markdown outside fenced code blocks and inline code spans. */
function mapOutsideCode(markdown: string, fn: (text: string) => string): string {
  const lines = markdown.split('\n');
  const out: string[] = [];
  let fence: string | undefined;
  let prose: string[] = [];
  const flush = () => {
    if (prose.length > 0) out.push(mapOutsideInlineCode(prose.join('\n'), fn));
    prose = [];
  };
  for (const line of lines) {
    const marker = FENCE.exec(line)?.[1];
    if (fence === undefined && marker !== undefined) {
      flush();
      fence = marker;
      out.push(line);
    } else if (fence !== undefined) {
      out.push(line);
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
    } else {
      prose.push(line);
    }
  }
  flush();
  return out.join('\n');
}

/**
 * Code spans are swapped for placeholders while `fn` runs, so a URL inside one is not a link
 * while a link whose text holds code (`[\`gp_minimize\`](…)`, common in API docs) still is.
 */
function mapOutsideInlineCode(text: string, fn: (text: string) => string): string {
  const spans: string[] = [];
  const masked = text.replace(INLINE_CODE, (span) => {
    spans.push(span);
    return `\uE000${spans.length - 1}\uE001`;
  });
  if (spans.length === 0) return fn(text);
  return fn(masked).replace(/\uE000(\d+)\uE001/g, (_, index: string) => spans[Number(index)] ?? '');
}
