/**
 * An independent oracle for "every reachable page": a breadth-first walk over the site's files
 * following `<a href>`/`<area href>` with a plain regular expression, not the crawler's parser,
 * so a bug in link extraction cannot hide itself.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const HREF = /<(?:a|area)\b[^>]*?\shref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/gi;
const FORM = /<form\b[\s\S]*?<\/form>/gi;

/** URL paths (as served, e.g. `/a/b.html` or `/dir/`) of HTML pages reachable from `startPath`. */
export function reachableHtmlPaths(root: string, startPath = '/'): Set<string> {
  const seen = new Set<string>([startPath]);
  const queue = [startPath];
  while (queue.length > 0) {
    const current = queue.shift() as string;
    const file = fileFor(root, current);
    if (!file) continue;
    const html = readFileSync(file, 'utf8').replace(FORM, (form) => form.replace(/<form\b[^>]*>/i, ''));
    for (const match of html.matchAll(HREF)) {
      const href = (match[1] ?? match[2] ?? match[3] ?? '').replace(/&amp;/g, '&').trim();
      if (!href || href.startsWith('#') || /^[a-z][a-z0-9+.-]*:/i.test(href)) continue;
      const url = new URL(href, `http://site${current}`);
      if (url.host !== 'site') continue;
      const target = decodeURIComponent(url.pathname);
      if (seen.has(target)) continue;
      if (!/\.html?$|\/$/.test(target)) continue;
      seen.add(target);
      queue.push(target);
    }
  }
  return new Set([...seen].filter((p) => fileFor(root, p) !== undefined));
}

export function fileFor(root: string, urlPath: string): string | undefined {
  let file = path.join(root, urlPath);
  if (urlPath.endsWith('/')) file = path.join(file, 'index.html');
  return existsSync(file) && statSync(file).isFile() ? file : undefined;
}
