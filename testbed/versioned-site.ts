/**
 * A site whose pages a test can edit, delete and add between crawls, served the way real servers
 * answer revalidation: every page carries an ETag (its body's hash) and a Last-Modified, and a
 * request whose If-None-Match matches gets 304 with no body. The request log of the underlying
 * SiteServer then shows which pages were answered 304 and which in full.
 */
import { createHash } from 'node:crypto';
import type { SiteServer } from './site-server';

export interface VersionedPages {
  /** Sets (or replaces) a page's HTML; the page's ETag and Last-Modified change with it. */
  set(path: string, html: string): void;
  /** The page answers with this status (404 or 410) from now on. */
  remove(path: string, status?: 404 | 410): void;
  html(path: string): string | undefined;
  paths(): string[];
  /** Bytes written to the wire for these pages so far (status lines, headers and bodies). */
  wireBytes(): number;
}

export function serveVersionedPages(site: SiteServer): VersionedPages {
  const pages = new Map<string, { html: string; etag: string; lastModified: string } | { gone: 404 | 410 }>();
  let clock = Date.parse('2026-01-01T00:00:00Z');
  let wireBytes = 0;
  const route = (path: string) =>
    site.route(path, (req, res) => {
      const written = req.socket.bytesWritten;
      res.once('finish', () => {
        wireBytes += req.socket.bytesWritten - written;
      });
      const page = pages.get(path);
      if (!page || 'gone' in page) {
        res.writeHead(page?.gone ?? 404, { 'content-type': 'text/html' }).end('<h1>gone</h1>');
        return;
      }
      const headers = { etag: page.etag, 'last-modified': page.lastModified };
      if (req.headers['if-none-match'] === page.etag) {
        res.writeHead(304, headers).end();
        return;
      }
      res.writeHead(200, { ...headers, 'content-type': 'text/html; charset=utf-8' }).end(page.html);
    });
  return {
    set(path, html) {
      clock += 60_000;
      const etag = `"${createHash('sha256').update(html).digest('hex').slice(0, 16)}"`;
      if (!pages.has(path)) route(path);
      pages.set(path, { html, etag, lastModified: new Date(clock).toUTCString() });
    },
    remove(path, status = 404) {
      if (!pages.has(path)) route(path);
      pages.set(path, { gone: status });
    },
    html(path) {
      const page = pages.get(path);
      return page && 'html' in page ? page.html : undefined;
    },
    paths: () => [...pages.keys()],
    wireBytes: () => wireBytes,
  };
}
