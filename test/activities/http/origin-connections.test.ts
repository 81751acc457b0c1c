import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { FetchPageOptions } from '../../../activities/http/fetch-options.ts';
import { fetchPage } from '../../../activities/http/fetch-page.ts';
import { OriginConnections } from '../../../activities/http/origin-connections.ts';
import type { Resolver } from '../../../activities/http/ssrf-guard.ts';
import { closeServers } from '../../../testbed/close-servers';

// Servers listen on 127.0.0.1 and 127.0.0.2 only; the resolver maps the test name to them.

interface CountingServer {
  readonly host: string;
  readonly port: number;
  readonly paths: string[];
  /** TCP connections the server accepted. */
  connections: number;
  readonly sockets: Set<Socket>;
}

const servers: http.Server[] = [];
const kept: OriginConnections[] = [];

afterEach(async () => {
  await Promise.all(kept.splice(0).map((c) => c.close()));
  await closeServers(servers);
});

async function startServer(
  handler: (req: http.IncomingMessage, res: http.ServerResponse) => void,
  host = '127.0.0.1',
  port = 0,
): Promise<CountingServer> {
  const server = http.createServer();
  servers.push(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const info: CountingServer = {
    host,
    port: (server.address() as AddressInfo).port,
    paths: [],
    connections: 0,
    sockets: new Set(),
  };
  server.on('connection', (socket) => {
    info.connections++;
    info.sockets.add(socket);
    socket.on('close', () => info.sockets.delete(socket));
  });
  server.on('request', (req, res) => {
    info.paths.push(req.url ?? '');
    handler(req, res);
  });
  return info;
}

const page = (_req: http.IncomingMessage, res: http.ServerResponse) => {
  res.writeHead(200, { 'content-type': 'text/html' });
  res.end('<p>hello</p>');
};

function keptConnections(limits?: ConstructorParameters<typeof OriginConnections>[0]): OriginConnections {
  const connections = new OriginConnections(limits);
  kept.push(connections);
  return connections;
}

const options = (
  connections: OriginConnections,
  extra: Partial<FetchPageOptions> = {},
): FetchPageOptions => ({
  userAgent: 'gleaner-test/1.0',
  allowHosts: ['127.0.0.1', '127.0.0.2', 'site.test'],
  connections,
  ...extra,
});

describe('fetchPage: connections kept per origin', () => {
  it('sends an origin’s requests one after another over one connection', async () => {
    const server = await startServer(page);
    const connections = keptConnections();
    const origin = `http://127.0.0.1:${server.port}`;
    for (const path of ['/a', '/b', '/c']) {
      const result = await fetchPage(`${origin}${path}`, options(connections));
      expect(result.kind).toBe('ok');
    }
    expect(server.paths).toEqual(['/a', '/b', '/c']);
    expect(server.connections).toBe(1);
    expect(connections.size).toBe(1);
  });

  it('gives requests sent at once to one origin a connection each (perOriginConcurrency)', async () => {
    // The server answers only once both requests are in: on one shared connection the second would
    // never arrive before the first was answered, and both would time out on their headers.
    const waiting: http.ServerResponse[] = [];
    const server = await startServer((req, res) => {
      if (req.url === '/z') return page(req, res);
      waiting.push(res);
      if (waiting.length < 2) return;
      for (const held of waiting.splice(0)) {
        held.writeHead(200, { 'content-type': 'text/html' });
        held.end('<p>both</p>');
      }
    });
    const connections = keptConnections();
    const origin = `http://127.0.0.1:${server.port}`;
    const results = await Promise.all(
      ['/x', '/y'].map((path) =>
        fetchPage(`${origin}${path}`, options(connections, { headersTimeoutMs: 5_000 })),
      ),
    );
    expect(results.map((r) => r.kind)).toEqual(['ok', 'ok']);
    expect(server.connections).toBe(2);
    // Both go back to the origin's kept connections: a third request reuses one of them.
    expect((await fetchPage(`${origin}/z`, options(connections))).kind).toBe('ok');
    expect(server.connections).toBe(2);
  });

  it('sends a request once more on a new connection when the kept one was closed under it', async () => {
    // The server drops each connection at its second request without answering, as a server whose
    // idle timeout ran out as the request left would.
    const requestsOn = new WeakMap<object, number>();
    const server = await startServer((req, res) => {
      const seen = (requestsOn.get(req.socket) ?? 0) + 1;
      requestsOn.set(req.socket, seen);
      if (seen >= 2) {
        req.socket.destroy();
        return;
      }
      page(req, res);
    });
    const connections = keptConnections();
    const origin = `http://127.0.0.1:${server.port}`;
    expect((await fetchPage(`${origin}/first`, options(connections))).kind).toBe('ok');
    expect((await fetchPage(`${origin}/second`, options(connections))).kind).toBe('ok');
    expect(server.paths).toEqual(['/first', '/second', '/second']);
    expect(server.connections).toBe(2);
    // From then on each request has a connection of its own: no request is sent twice again.
    expect((await fetchPage(`${origin}/third`, options(connections))).kind).toBe('ok');
    expect((await fetchPage(`${origin}/fourth`, options(connections))).kind).toBe('ok');
    expect(server.paths).toEqual(['/first', '/second', '/second', '/third', '/fourth']);
    expect(server.connections).toBe(4);
  });

  it('reports a connection closed without an answer as a network error when it was new', async () => {
    const server = await startServer((req) => req.socket.destroy());
    const connections = keptConnections();
    const result = await fetchPage(`http://127.0.0.1:${server.port}/gone`, options(connections));
    expect(result.kind).toBe('network-error');
    expect(server.paths).toEqual(['/gone']);
  });

  it('opens a new connection when the host now resolves to another address, and reaches only that one', async () => {
    const first = await startServer(page, '127.0.0.1');
    let second: CountingServer;
    try {
      second = await startServer(page, '127.0.0.2', first.port);
    } catch {
      return; // the same port is taken on 127.0.0.2: nothing to test on this machine now
    }
    const answers = ['127.0.0.1', '127.0.0.2'];
    let asked = 0;
    const resolve: Resolver = async () => [{ address: answers[Math.min(asked++, 1)] as string, family: 4 }];
    const connections = keptConnections();
    const url = `http://site.test:${first.port}/page`;
    expect((await fetchPage(url, options(connections, { resolve }))).kind).toBe('ok');
    expect((await fetchPage(url, options(connections, { resolve }))).kind).toBe('ok');
    expect(first.paths).toEqual(['/page']);
    expect(second.paths).toEqual(['/page']);
    expect(connections.size).toBe(2);
  });

  it('drops a connection whose body was left unread and still serves the next request', async () => {
    const server = await startServer((req, res) => {
      if (req.url === '/missing') {
        res.writeHead(404, { 'content-type': 'text/html' });
        res.end('<p>not here</p>'.repeat(2_000));
        return;
      }
      page(req, res);
    });
    const connections = keptConnections();
    const origin = `http://127.0.0.1:${server.port}`;
    const missing = await fetchPage(`${origin}/missing`, options(connections));
    expect(missing).toMatchObject({ kind: 'http-error', status: 404 });
    const found = await fetchPage(`${origin}/found`, options(connections));
    expect(found.kind).toBe('ok');
    expect(server.paths).toEqual(['/missing', '/found']);
  });

  it('keeps at most maxOrigins origins, closing the least recently used', async () => {
    const a = await startServer(page);
    const b = await startServer(page);
    const c = await startServer(page);
    const connections = keptConnections({ maxOrigins: 2 });
    for (const server of [a, b, c]) {
      expect((await fetchPage(`http://127.0.0.1:${server.port}/`, options(connections))).kind).toBe('ok');
    }
    expect(connections.size).toBe(2);
    await expect.poll(() => a.sockets.size, { timeout: 5_000 }).toBe(0);
    expect(c.sockets.size).toBe(1);
  });

  it('closes every kept connection on close()', async () => {
    const server = await startServer(page);
    const connections = keptConnections();
    await fetchPage(`http://127.0.0.1:${server.port}/`, options(connections));
    expect(server.sockets.size).toBe(1);
    await connections.close();
    expect(connections.size).toBe(0);
    await expect.poll(() => server.sockets.size, { timeout: 5_000 }).toBe(0);
  });
});
