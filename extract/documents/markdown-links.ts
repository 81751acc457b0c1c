/**
 * Links of a Markdown document: inline links `[text](dest "title")`, autolinks `<https://…>` (written
 * out as inline links) and reference definitions `[label]: dest`, outside fenced code. Their
 * destinations are made absolute in the Markdown (as the HTML path does for `<a href>`), and they are
 * listed for the crawler to follow.
 *
 * One pass per line, linear: the `]` and `)` an opener needs are searched once and remembered for the
 * openers after it (a line of `[[[[…` must not rescan itself for each one; see
 * domain/markdown-inline-scan.ts).
 */

export interface FoundLink {
  href: string;
  text: string;
}

const FENCE = /^\s{0,3}(`{3,}|~{3,})/;
const REFERENCE_DEFINITION = /^( {0,3}\[([^\]]{1,999})\]:[ \t]*)(<[^>]*>|\S+)/;
/** CommonMark autolinks: `<scheme:…>` and `<name@host>`. */
const AUTOLINK =
  /<([A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*|[^\s<>@"\\[\]()]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*)>/g;

/** Returns the Markdown with absolute link destinations, and the links in document order. */
export function resolveMarkdownLinks(
  markdown: string,
  base: string | undefined,
): { markdown: string; links: FoundLink[] } {
  const links: FoundLink[] = [];
  const out: string[] = [];
  let fence: string | undefined;
  for (const line of markdown.split('\n')) {
    const opener = FENCE.exec(line);
    if (fence !== undefined) {
      if (opener && (opener[1] as string)[0] === fence[0] && (opener[1] as string).length >= fence.length)
        fence = undefined;
      out.push(line);
      continue;
    }
    if (opener) {
      fence = opener[1];
      out.push(line);
      continue;
    }
    const definition = REFERENCE_DEFINITION.exec(line);
    if (definition) {
      const dest = unwrap(definition[3] as string);
      links.push({ href: absolute(dest, base), text: definition[2] as string });
      out.push(
        `${definition[1]}${absolute(dest, base)}${line.slice((definition[1] as string).length + (definition[3] as string).length)}`,
      );
      continue;
    }
    out.push(inlineLinks(line, base, links));
  }
  return { markdown: out.join('\n'), links };
}

function inlineLinks(line: string, base: string | undefined, links: FoundLink[]): string {
  let result = '';
  let copied = 0;
  let knownClose = -2;
  let knownParen = -2;
  const closeFrom = (from: number) => {
    if (knownClose === -1 || knownClose >= from) return knownClose;
    knownClose = line.indexOf(']', from);
    return knownClose;
  };
  const parenFrom = (from: number) => {
    if (knownParen === -1 || knownParen >= from) return knownParen;
    knownParen = line.indexOf(')', from);
    return knownParen;
  };
  for (let at = line.indexOf('['); at !== -1; at = line.indexOf('[', at + 1)) {
    if (at < copied) continue;
    const close = closeFrom(at + 1);
    if (close === -1) break;
    if (line[close + 1] !== '(') continue;
    const paren = parenFrom(close + 2);
    if (paren === -1) break;
    const inside = line.slice(close + 2, paren).trim();
    const space = inside.search(/\s/);
    const dest = unwrap(space === -1 ? inside : inside.slice(0, space));
    const rest = space === -1 ? '' : inside.slice(space);
    const isImage = at > 0 && line[at - 1] === '!';
    const text = line.slice(at + 1, close);
    if (!isImage && dest !== '' && !dest.startsWith('#')) links.push({ href: absolute(dest, base), text });
    result += `${line.slice(copied, close + 2)}${absolute(dest, base)}${rest})`;
    copied = paren + 1;
    at = paren;
  }
  result += line.slice(copied);
  return inlineAutolinks(result, links);
}

/**
 * Autolinks become inline links (`<https://a.example/>` → `[https://a.example/](https://a.example/)`),
 * outside code spans: the normaliser escapes text that reads as a tag, and an autolink does.
 */
function inlineAutolinks(line: string, links: FoundLink[]): string {
  if (!line.includes('<')) return line;
  return line
    .split(/(`+[^`]*?`+)/)
    .map((part, index) =>
      index % 2 === 1
        ? part
        : part.replace(AUTOLINK, (_whole, target: string) => {
            const email = !/^[A-Za-z][A-Za-z0-9+.-]{1,31}:/.test(target);
            const href = email ? `mailto:${target}` : target;
            if (/^https?:\/\//i.test(href)) links.push({ href, text: target });
            return `[${target.replace(/[[\]\\]/g, '\\$&')}](${href.replace(/[()]/g, encodeURIComponent)})`;
          }),
    )
    .join('');
}

function unwrap(dest: string): string {
  return dest.startsWith('<') && dest.endsWith('>') ? dest.slice(1, -1) : dest;
}

/** `dest` resolved against `base`; kept as written when it cannot be (or there is no base). */
function absolute(dest: string, base: string | undefined): string {
  if (base === undefined || dest === '' || dest.startsWith('#')) return dest;
  try {
    return new URL(dest, base).href;
  } catch {
    return dest;
  }
}
