/**
 * A real HTTP server on loopback serving a folder of files, logging every request with its own
 * timestamps: the evidence politeness and exactly-once tests assert on. Per-path overrides let
 * a test add robots.txt, redirects or failures without touching the files.
 */
import { createReadStream, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

export interface RequestLogEntry {
  method: string;
  path: string;
  userAgent: string;
  startedAtMs: number;
  endedAtMs: number;
  status: number;
}

export type RouteHandler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

export interface SiteServer {
  url: string;
  origin: string;
  port: number;
  host: string;
  log: RequestLogEntry[];
  /** Adds or replaces a handler for one exact path (query ignored). */
  route(pathname: string, handler: RouteHandler): void;
  close(): Promise<void>;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
  '.css': 'text/css',
  '.js': 'text/javascript',
  '.json': 'application/json',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.txt': 'text/plain; charset=utf-8',
  '.xml': 'application/xml',
};

export async function serveSite(
  root: string | undefined,
  options: { host?: string; port?: number } = {},
): Promise<SiteServer> {
  const host = options.host ?? '127.0.0.1';
  const routes = new Map<string, RouteHandler>();
  const log: RequestLogEntry[] = [];

  const server = http.createServer((req, res) => {
    const entry: RequestLogEntry = {
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      userAgent: req.headers['user-agent'] ?? '',
      startedAtMs: Date.now(),
      endedAtMs: 0,
      status: 0,
    };
    log.push(entry);
    // The request ends when the server hands the response's last bytes to the socket. res.end()
    // writes them synchronously when the socket has room, so the clock is read just before that
    // call: read after it returns, it also counted any time this process was descheduled after the
    // write, while the client already had the body (a 149 ms gap for a 150 ms delay in CI on two
    // busy cores; 'finish', run later still by the loop, read 145). When bytes are left queued
    // (a large or streamed body), the end is 'finish', when the last of them reached the socket.
    // 'close' covers a client that hung up first: gap assertions must never see an end of 0.
    const end = (atMs = Date.now()) => {
      if (entry.endedAtMs === 0) entry.endedAtMs = atMs;
      if (entry.status === 0 && res.headersSent) entry.status = res.statusCode;
    };
    const endResponse = res.end.bind(res) as (...args: unknown[]) => http.ServerResponse;
    res.end = ((...args: unknown[]) => {
      const beforeWriteMs = Date.now();
      const ended = endResponse(...args);
      if (res.writableLength === 0) end(beforeWriteMs);
      return ended;
    }) as typeof res.end;
    res.on('finish', () => end());
    res.on('close', () => end());
    // The request target is a path, even one starting `//` (as a base-relative URL that would be
    // a host), and a malformed escape is the client's error, not a crash of the test server.
    let pathname: string;
    try {
      pathname = decodeURIComponent(new URL(`http://x${req.url ?? '/'}`).pathname);
    } catch {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('bad request path');
      return;
    }
    const handler = routes.get(pathname);
    if (handler) {
      handler(req, res);
      return;
    }
    if (!root) {
      notFound(res);
      return;
    }
    serveFile(root, pathname, res);
  });

  await new Promise<void>((resolve) => server.listen(options.port ?? 0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  const origin = `http://${host}:${port}`;
  return {
    url: `${origin}/`,
    origin,
    port,
    host,
    log,
    route: (pathname, handler) => routes.set(pathname, handler),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function notFound(res: http.ServerResponse): void {
  res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>not found</h1>');
}

function serveFile(root: string, pathname: string, res: http.ServerResponse): void {
  let file = path.join(root, path.normalize(pathname));
  if (!file.startsWith(path.resolve(root))) {
    notFound(res);
    return;
  }
  try {
    let stats = statSync(file);
    if (stats.isDirectory()) {
      if (!pathname.endsWith('/')) {
        res.writeHead(301, { location: `${pathname}/` }).end();
        return;
      }
      file = path.join(file, 'index.html');
      stats = statSync(file);
    }
    res.writeHead(200, {
      'content-type': TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream',
      'content-length': stats.size,
    });
    createReadStream(file).pipe(res);
  } catch {
    notFound(res);
  }
}

/** robots.txt and sitemap.xml: what a crawler asks of every origin before its pages. */
export function isProtocolFile(path: string): boolean {
  return path === '/robots.txt' || path === '/sitemap.xml';
}
