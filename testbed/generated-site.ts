/**
 * Small generated sites for tests that need precise shapes: `pageCount` pages, each linking to
 * the next two, the first linking to all, and optional links to other origins.
 */
import type { SiteServer } from './site-server';

export function pageHtml(title: string, links: string[], body = ''): string {
  const anchors = links.map((href, i) => `<li><a href="${href}">link ${i} to ${href}</a></li>`).join('\n');
  return `<!doctype html><html><head><title>${title}</title></head><body><main><h1>${title}</h1><p>${body}</p><ul>${anchors}</ul></main></body></html>`;
}

export function addGeneratedPages(
  site: SiteServer,
  pageCount: number,
  options: { crossLinks?: string[]; body?: (index: number) => string } = {},
): string[] {
  const paths = Array.from({ length: pageCount }, (_, i) => (i === 0 ? '/' : `/page-${i}.html`));
  paths.forEach((path, i) => {
    const links = i === 0 ? paths.slice(1) : [paths[(i + 1) % pageCount], paths[(i + 2) % pageCount]];
    const html = pageHtml(
      `Page ${i} of ${site.origin}`,
      [...(links as string[]), ...(i === 0 ? (options.crossLinks ?? []) : [])],
      options.body?.(i) ?? '',
    );
    site.route(path, (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
    });
  });
  return paths;
}
