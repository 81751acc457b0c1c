import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InvalidFetchOptionsError } from '../../../activities/http/errors.ts';
import { DEFAULT_FETCH_OPTIONS, type FetchPageOptions } from '../../../activities/http/fetch-options.ts';
import { fetchPage } from '../../../activities/http/fetch-page.ts';
import type { FetchPageResult } from '../../../activities/http/fetch-result.ts';
import { checkUrl, type Resolver } from '../../../activities/http/ssrf-guard.ts';
import { closeServers } from '../../../testbed/close-servers';

// Every server here listens on 127.0.0.0/8 and every resolver maps names to loopback: no other traffic.

interface LoggedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
}

interface TestServer {
  readonly origin: string;
  readonly port: number;
  readonly log: LoggedRequest[];
}

const servers: http.Server[] = [];

afterEach(async () => {
  await closeServers(servers);
});

async function startServer(
  handler: (req: http.IncomingMessage, res: http.ServerResponse, server: TestServer) => void,
  host = '127.0.0.1',
): Promise<TestServer> {
  const log: LoggedRequest[] = [];
  const server = http.createServer();
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  const info: TestServer = { origin: `http://${host}:${port}`, port, log };
  server.on('request', (req, res) => {
    log.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    res.on('error', () => {});
    handler(req, res, info);
  });
  return info;
}

const UA = 'gleaner-test/1.0 (+https://example.invalid/bot)';
const allowLoopback = (extra: Partial<FetchPageOptions> = {}): FetchPageOptions => ({
  userAgent: UA,
  allowHosts: ['127.0.0.1'],
  ...extra,
});

const TEST_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg+6/G7/ClBCndAL4N
d5Qi7nLhLaLSULjB3Czii23r6QyhRANCAASDg/8mGKwAttvI0JFbSRIQsB8LcJPm
3imjAsL++6ThYnQfs0IMZxFWv6dR22kiXp/lIFevPgT/1HVjsog42zcx
-----END PRIVATE KEY-----`;
const TEST_CERT = `-----BEGIN CERTIFICATE-----
MIIBlDCCATugAwIBAgIUVRz1ZdG4cCpiY70AAahyv3Yn2U0wCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJc2l0ZS50ZXN0MCAXDTI2MTEyMjAxMzczNloYDzIxMjYxMDI5
MDEzNzM2WjAUMRIwEAYDVQQDDAlzaXRlLnRlc3QwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAASDg/8mGKwAttvI0JFbSRIQsB8LcJPm3imjAsL++6ThYnQfs0IMZxFW
v6dR22kiXp/lIFevPgT/1HVjsog42zcxo2kwZzAdBgNVHQ4EFgQU3R+degUyotx2
6TMeami54z9wcQYwHwYDVR0jBBgwFoAU3R+degUyotx26TMeami54z9wcQYwDwYD
VR0TAQH/BAUwAwEB/zAUBgNVHREEDTALgglzaXRlLnRlc3QwCgYIKoZIzj0EAwID
RwAwRAIgIZl3ICIg0aH7bFFLAF0cKXhKDtBwcEXJK5KxmWwFR/YCIEqiy4IlJGF5
AeDk3TpjX8OarKja+p+CcCaWsi/s+J3d
-----END CERTIFICATE-----`;

function html(res: http.ServerResponse, body: string | Buffer, headers: http.OutgoingHttpHeaders = {}): void {
  const length = Buffer.byteLength(body);
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': length, ...headers });
  res.end(body);
}

function expectKind<K extends FetchPageResult['kind']>(
  result: FetchPageResult,
  kind: K,
): Extract<FetchPageResult, { kind: K }> {
  expect(result.kind, JSON.stringify({ ...result, body: undefined, text: undefined })).toBe(kind);
  return result as Extract<FetchPageResult, { kind: K }>;
}

/** Writes `totalBytes` in 64 KiB chunks with backpressure, no Content-Length (chunked). */
function streamBytes(res: http.ServerResponse, totalBytes: number, contentType = 'text/html'): void {
  res.writeHead(200, { 'content-type': contentType });
  const chunk = Buffer.alloc(64 * 1024, 'a');
  let sent = 0;
  const pump = (): void => {
    while (sent < totalBytes && !res.destroyed) {
      sent += chunk.length;
      if (!res.write(chunk)) {
        res.once('drain', pump);
        return;
      }
    }
    if (!res.destroyed) res.end();
  };
  pump();
}

describe('fetchPage: responses', () => {
  it('fetches a page and sends the polite headers', async () => {
    const server = await startServer((_req, res) =>
      html(res, '<title>Hi</title><p>héllo</p>', {
        etag: '"v1"',
        'last-modified': 'Wed, 21 Oct 2015 07:28:00 GMT',
        'x-robots-tag': 'noarchive',
        'content-language': 'en',
        'set-cookie': 'a=b',
      }),
    );
    const r = expectKind(await fetchPage(`${server.origin}/page?q=1#frag`, allowLoopback()), 'ok');
    expect(r.status).toBe(200);
    expect(r.text).toBe('<title>Hi</title><p>héllo</p>');
    expect(r.body.equals(Buffer.from(r.text))).toBe(true);
    expect(r.charset).toBe('utf-8');
    expect(r.contentType).toBe('text/html');
    expect(r.bytes).toBe(r.body.length);
    expect(r.headers).toEqual({
      'content-type': 'text/html; charset=utf-8',
      etag: '"v1"',
      'last-modified': 'Wed, 21 Oct 2015 07:28:00 GMT',
      'x-robots-tag': 'noarchive',
      'content-language': 'en',
      'content-length': String(r.bytes),
    });
    expect(r.redirects).toEqual([]);
    expect(r.finalUrl).toBe(r.requestedUrl);
    expect(r.timings.ttfbMs).toBeGreaterThanOrEqual(0);
    expect(r.timings.totalMs).toBeGreaterThanOrEqual(r.timings.ttfbMs ?? 0);
    expect(Math.abs(r.timings.startedAtMs - Date.now())).toBeLessThan(10_000);

    expect(server.log).toHaveLength(1);
    const req = server.log[0];
    expect(req?.url).toBe('/page?q=1');
    expect(req?.headers).toMatchObject({
      'user-agent': UA,
      accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.1',
      'accept-encoding': 'gzip, deflate, br',
      host: `127.0.0.1:${server.port}`,
    });
    expect(req?.headers['if-none-match']).toBeUndefined();
  });

  it('returns not-modified for a conditional GET', async () => {
    const server = await startServer((req, res) => {
      if (req.headers['if-none-match'] === '"v1"') {
        res.writeHead(304, { etag: '"v1"' });
        res.end();
      } else html(res, 'new');
    });
    const options = allowLoopback({ ifNoneMatch: '"v1"', ifModifiedSince: 'Wed, 21 Oct 2015 07:28:00 GMT' });
    const r = expectKind(await fetchPage(`${server.origin}/`, options), 'not-modified');
    expect(r.status).toBe(304);
    expect(r.headers.etag).toBe('"v1"');
    expect(server.log[0]?.headers['if-modified-since']).toBe('Wed, 21 Oct 2015 07:28:00 GMT');
  });

  it('returns http-error for 404 without reading the body', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('not here');
    });
    const r = expectKind(await fetchPage(`${server.origin}/missing`, allowLoopback()), 'http-error');
    expect(r.status).toBe(404);
    expect(r.retryAfter).toBeUndefined();
  });

  it('returns http-error with the raw Retry-After for 503', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(503, { 'retry-after': '120' });
      res.end();
    });
    const r = expectKind(await fetchPage(`${server.origin}/`, allowLoopback()), 'http-error');
    expect(r).toMatchObject({ status: 503, retryAfter: '120', headers: { 'retry-after': '120' } });
  });

  it('refuses a content type that is not allowed, and accepts it with a wildcard', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/pdf' });
      res.end('%PDF-1.4');
    });
    const r = expectKind(
      await fetchPage(`${server.origin}/doc.pdf`, allowLoopback()),
      'unsupported-content-type',
    );
    expect(r).toMatchObject({ status: 200, contentType: 'application/pdf', bytes: 0 });

    const plain = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('plain');
    });
    expect((await fetchPage(`${plain.origin}/`, allowLoopback())).kind).toBe('unsupported-content-type');
    const ok = expectKind(
      await fetchPage(`${plain.origin}/`, allowLoopback({ allowedContentTypes: ['text/*'] })),
      'ok',
    );
    expect(ok.text).toBe('plain');
  });

  it('refuses a missing content type and an unknown content encoding', async () => {
    const server = await startServer((req, res) => {
      if (req.url === '/none') {
        res.end('<p>x</p>');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'zstd' });
      res.end('xx');
    });
    expect((await fetchPage(`${server.origin}/none`, allowLoopback())).kind).toBe('unsupported-content-type');
    const r = expectKind(
      await fetchPage(`${server.origin}/zstd`, allowLoopback()),
      'unsupported-content-type',
    );
    expect(r.contentEncoding).toBe('zstd');
  });

  it('takes a body without a content type when any type is allowed, and still refuses an unknown encoding', async () => {
    const server = await startServer((req, res) => {
      if (req.url === '/zstd') res.writeHead(200, { 'content-encoding': 'zstd' });
      res.end('User-agent: *\nDisallow: /private/\n');
    });
    const anyType = allowLoopback({ allowedContentTypes: ['*/*'] });
    const r = expectKind(await fetchPage(`${server.origin}/none`, anyType), 'ok');
    expect(r.text).toBe('User-agent: *\nDisallow: /private/\n');
    expect(r.contentType).toBe('');
    expect((await fetchPage(`${server.origin}/zstd`, anyType)).kind).toBe('unsupported-content-type');
  });

  it('lets acceptResponse refuse on the headers of the final URL, and drops the unread body', async () => {
    const chunk = Buffer.alloc(64 * 1024, 'a');
    const chunks = 200;
    let flushedBytes = 0;
    let closed: (() => void) | undefined;
    const closedAt = new Promise<number>((resolve) => {
      closed = () => resolve(performance.now());
    });
    const server = await startServer((req, res) => {
      if (req.url === '/old') {
        res.writeHead(301, { location: '/notes.md' }).end();
        return;
      }
      // 12.5 MiB over ~5 s, each chunk sent once the last reached the socket: what was flushed is counted.
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      let sent = 0;
      const timer = setInterval(() => {
        if (res.writableNeedDrain) return;
        res.write(chunk, () => {
          flushedBytes += chunk.length;
        });
        if (++sent === chunks) {
          clearInterval(timer);
          res.end();
        }
      }, 25);
      res.on('close', () => {
        clearInterval(timer);
        closed?.();
      });
    });
    const asked: Array<[string | undefined, string]> = [];
    const started = performance.now();
    const r = expectKind(
      await fetchPage(
        `${server.origin}/old`,
        allowLoopback({
          allowedContentTypes: ['text/*'],
          acceptResponse: (mediaType, finalUrl) => {
            asked.push([mediaType, finalUrl]);
            return false;
          },
        }),
      ),
      'unsupported-content-type',
    );
    expect(r).toMatchObject({ status: 200, contentType: 'text/plain', bytes: 0, wireBytes: 0 });
    expect(asked).toEqual([['text/plain', `${server.origin}/notes.md`]]);
    // The server sees the connection closed at once, long before its body would have been sent.
    expect((await closedAt) - started).toBeLessThan(2_000);
    expect(flushedBytes).toBeLessThan(chunk.length * chunks * 0.2);
  });
});

describe('fetchPage: redirects', () => {
  it('follows a chain of 301/302/303/307/308 with relative Locations', async () => {
    const hops: Record<string, [number, string]> = {
      '/a': [301, '/b'],
      '/b': [302, 'c?x=1'],
      '/c?x=1': [303, '../d#frag'],
      '/d': [307, '/e'],
      '/e': [308, '/final'],
    };
    const server = await startServer((req, res) => {
      const hop = hops[req.url ?? ''];
      if (hop) {
        res.writeHead(hop[0], { location: hop[1] });
        res.end();
      } else html(res, 'arrived');
    });
    const r = expectKind(await fetchPage(`${server.origin}/a`, allowLoopback()), 'ok');
    expect(r.text).toBe('arrived');
    expect(r.redirects).toEqual(['/a', '/b', '/c?x=1', '/d', '/e'].map((p) => `${server.origin}${p}`));
    expect(r.finalUrl).toBe(`${server.origin}/final`);
    expect(server.log.map((l) => l.url)).toEqual(['/a', '/b', '/c?x=1', '/d', '/e', '/final']);
  });

  it("sends a page's validators to that page only, not to where it redirects", async () => {
    // A server that answers 304 to any If-Modified-Since at or after its copy's date, as many do:
    // /moved's old validators sent to /target would make a page that now redirects look unchanged.
    const server = await startServer((req, res) => {
      if (req.url === '/moved') {
        res.writeHead(301, { location: '/target' });
        res.end();
      } else if (
        req.headers['if-none-match'] !== undefined ||
        req.headers['if-modified-since'] !== undefined
      ) {
        res.writeHead(304);
        res.end();
      } else html(res, 'the target');
    });
    const options = allowLoopback({
      ifNoneMatch: '"moved-v1"',
      ifModifiedSince: 'Wed, 21 Oct 2015 07:28:00 GMT',
    });
    const r = expectKind(await fetchPage(`${server.origin}/moved`, options), 'ok');
    expect(r.text).toBe('the target');
    expect(server.log[0]?.headers['if-none-match']).toBe('"moved-v1"');
    expect(server.log[1]?.headers['if-none-match']).toBeUndefined();
    expect(server.log[1]?.headers['if-modified-since']).toBeUndefined();
  });

  it('stops a redirect loop', async () => {
    const server = await startServer((req, res) => {
      res.writeHead(302, { location: req.url === '/one' ? '/two' : '/one' });
      res.end();
    });
    const r = expectKind(await fetchPage(`${server.origin}/one`, allowLoopback()), 'redirect-limit');
    expect(r.reason).toBe('loop');
    expect(r.redirects).toEqual([`${server.origin}/one`, `${server.origin}/two`]);
    expect(r.location).toBe(`${server.origin}/one`);
    expect(server.log).toHaveLength(2);
  });

  it('stops after maxRedirects', async () => {
    const server = await startServer((req, res) => {
      const n = Number(req.url?.slice(1));
      res.writeHead(301, { location: `/${n + 1}` });
      res.end();
    });
    const r = expectKind(
      await fetchPage(`${server.origin}/0`, allowLoopback({ maxRedirects: 3 })),
      'redirect-limit',
    );
    expect(r).toMatchObject({ reason: 'too-many', status: 301, location: `${server.origin}/4` });
    expect(r.redirects).toHaveLength(4);
    expect(server.log).toHaveLength(4);
  });

  it('blocks a redirect to a loopback address that is not allowed, before connecting to it', async () => {
    const inner = await startServer((_req, res) => html(res, 'secret'), '127.0.0.2');
    const outer = await startServer((_req, res) => {
      res.writeHead(302, { location: `http://127.0.0.2:${inner.port}/admin` });
      res.end();
    });
    const r = expectKind(await fetchPage(`${outer.origin}/`, allowLoopback()), 'blocked');
    expect(r).toMatchObject({ reason: 'forbidden-address', address: '127.0.0.2', addressClass: 'loopback' });
    expect(r.finalUrl).toBe(`http://127.0.0.2:${inner.port}/admin`);
    expect(r.redirects).toEqual([`${outer.origin}/`]);
    expect(outer.log).toHaveLength(1);
    expect(inner.log).toHaveLength(0);
  });

  it('resolves a redirect hop once, asks beforeRedirect, and connects to the address it checked', async () => {
    const server = await startServer((req, res) => {
      if (req.url === '/start') {
        res.writeHead(302, { location: `http://hop.test:${server.port}/there` });
        res.end();
      } else html(res, 'arrived');
    });
    const lookups: string[] = [];
    const resolve: Resolver = async (hostname) => {
      lookups.push(hostname);
      return [{ address: '127.0.0.1', family: 4 }];
    };
    const asked: string[] = [];
    const beforeRedirect = async (url: string) => {
      asked.push(url);
      return true;
    };
    const r = expectKind(
      await fetchPage(`http://start.test:${server.port}/start`, allowLoopback({ resolve, beforeRedirect })),
      'ok',
    );
    expect(r.text).toBe('arrived');
    expect(asked).toEqual([`http://hop.test:${server.port}/there`]);
    expect(lookups).toEqual(['start.test', 'hop.test']);
    expect(server.log.map((l) => l.headers.host)).toEqual([
      `start.test:${server.port}`,
      `hop.test:${server.port}`,
    ]);
  });

  it('blocks a redirect to a non-http scheme', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(301, { location: 'file:///etc/passwd' });
      res.end();
    });
    const r = expectKind(await fetchPage(`${server.origin}/`, allowLoopback()), 'blocked');
    expect(r.reason).toBe('unsupported-scheme');
  });

  it('treats a redirect without Location as an http-error', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(302);
      res.end();
    });
    expect(expectKind(await fetchPage(`${server.origin}/`, allowLoopback()), 'http-error').status).toBe(302);
  });
});

describe('fetchPage: SSRF guard', () => {
  it('blocks a loopback URL when allowHosts is empty, without any connection', async () => {
    const server = await startServer((_req, res) => html(res, 'secret'));
    const r = expectKind(await fetchPage(`${server.origin}/`, { userAgent: UA, allowHosts: [] }), 'blocked');
    expect(r).toMatchObject({ reason: 'forbidden-address', addressClass: 'loopback', bytes: 0 });
    expect(r.status).toBeUndefined();
    expect(server.log).toHaveLength(0);
  });

  it.each([
    ['ftp://127.0.0.1/', 'unsupported-scheme'],
    ['file:///etc/passwd', 'unsupported-scheme'],
    ['http://user:pw@127.0.0.1/', 'credentials-in-url'],
    ['http://abcdefghij234567.onion/', 'onion-host'],
    ['not a url', 'invalid-url'],
    ['http://169.254.169.254/latest/meta-data/', 'forbidden-address'],
    ['http://[::ffff:127.0.0.1]/', 'forbidden-address'],
    ['http://0x7f.1/', 'forbidden-address'],
    ['http://2130706433/', 'forbidden-address'],
    ['http://[fd00:ec2::254]/', 'forbidden-address'],
    ['http://0.0.0.0/', 'forbidden-address'],
  ])('blocks %s (%s)', async (url, reason) => {
    const r = expectKind(await fetchPage(url, { userAgent: UA, allowHosts: [] }), 'blocked');
    expect(r.reason).toBe(reason);
  });

  it('connects to the address it checked, keeping the host name in the Host header', async () => {
    const rebound = await startServer((_req, res) => html(res, 'rebound'), '127.0.0.2');
    const server = await startServer((_req, res) => html(res, 'pinned'));
    let calls = 0;
    // A rebinding resolver: the first answer is checked; any later answer would point elsewhere.
    const resolve: Resolver = async () => {
      calls += 1;
      return [{ address: calls === 1 ? '127.0.0.1' : '127.0.0.2', family: 4 }];
    };
    const url = `http://Site.Test:${server.port}/`;
    const r = expectKind(await fetchPage(url, { userAgent: UA, allowHosts: ['site.test'], resolve }), 'ok');
    expect(r.text).toBe('pinned');
    expect(calls).toBe(1);
    expect(server.log[0]?.headers.host).toBe(`site.test:${server.port}`);
    expect(rebound.log).toHaveLength(0);
  });

  it('allows a host by its resolved address and checks every address', async () => {
    const loopbackOnly: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];
    await expect(
      checkUrl('http://app.test/', { allowHosts: ['127.0.0.1'], resolve: loopbackOnly }),
    ).resolves.toMatchObject({
      hostname: 'app.test',
    });
    // One non-public address among public ones blocks the whole host (checkUrl never connects).
    const mixed: Resolver = async () => [
      { address: '8.8.8.8', family: 4 },
      { address: '10.0.0.5', family: 4 },
    ];
    await expect(checkUrl('http://mixed.test/', { allowHosts: [], resolve: mixed })).rejects.toMatchObject({
      name: 'BlockedUrlError',
      reason: 'forbidden-address',
      address: '10.0.0.5',
      addressClass: 'private',
    });
    const v6: Resolver = async () => [{ address: '::1', family: 6 }];
    await expect(checkUrl('http://v6.test/', { allowHosts: ['[::1]'], resolve: v6 })).resolves.toBeDefined();
    await expect(checkUrl('http://v6.test/', { allowHosts: ['127.0.0.1'], resolve: v6 })).rejects.toThrow(
      /::1/,
    );
  });

  it('speaks TLS to the pinned address with the original host as SNI, and verifies the certificate', async () => {
    // Self-signed for site.test (test-only key): the fetch must refuse it, after sending SNI site.test.
    const server = https.createServer({ key: TEST_KEY, cert: TEST_CERT }, (_req, res) => html(res, 'tls'));
    servers.push(server);
    const sniSeen: string[] = [];
    server.on('tlsClientError', (_err, socket) =>
      sniSeen.push(String((socket as { servername?: unknown }).servername)),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const resolve: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];
    const options = { userAgent: UA, allowHosts: ['site.test'], resolve };
    const r = expectKind(await fetchPage(`https://site.test:${port}/`, options), 'network-error');
    expect(r.code).toBe('DEPTH_ZERO_SELF_SIGNED_CERT');
    await vi.waitFor(() => expect(sniSeen).toEqual(['site.test']));
  });

  it('fetches from an allowed IPv6 loopback literal', async () => {
    const server = await startServer((_req, res) => html(res, 'six'), '::1');
    const url = `http://[::1]:${server.port}/`;
    const r = expectKind(await fetchPage(url, { userAgent: UA, allowHosts: ['::1'] }), 'ok');
    expect(r.text).toBe('six');
  });
});

describe('fetchPage: limits', () => {
  it('cuts a 20 MB body near the cap and returns quickly', async () => {
    const server = await startServer((_req, res) => streamBytes(res, 20 * 1024 * 1024));
    const started = performance.now();
    const r = expectKind(await fetchPage(`${server.origin}/big`, allowLoopback()), 'too-large');
    const elapsedMs = performance.now() - started;
    const cap = DEFAULT_FETCH_OPTIONS.maxBodyBytes;
    expect(r.limitBytes).toBe(cap);
    expect(r.wireBytes).toBeGreaterThan(cap);
    expect(r.wireBytes).toBeLessThan(cap + 1024 * 1024);
    expect(r.bytes).toBeLessThanOrEqual(cap);
    expect(elapsedMs).toBeLessThan(3_000);
  });

  it('with truncateBody keeps the first maxBodyBytes of a longer body, even one declared too long', async () => {
    const cap = 256 * 1024;
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html', 'content-length': String(4 * cap) });
      res.end(Buffer.alloc(4 * cap, 'a'));
    });
    const r = expectKind(
      await fetchPage(`${server.origin}/`, allowLoopback({ maxBodyBytes: cap, truncateBody: true })),
      'ok',
    );
    expect(r.truncated).toBe(true);
    expect(r.body.length).toBe(cap);
    expect(r.bytes).toBe(cap);
    expect(r.text).toBe('a'.repeat(cap));
    // A body under the cap is whole and not marked.
    const small = expectKind(
      await fetchPage(`${server.origin}/`, allowLoopback({ maxBodyBytes: 8 * cap, truncateBody: true })),
      'ok',
    );
    expect(small.truncated).toBeUndefined();
    expect(small.body.length).toBe(4 * cap);
  });

  it('with truncateBody cuts a gzip bomb at maxBodyBytes of decompressed output', async () => {
    const bomb = zlib.gzipSync(Buffer.alloc(64 * 1024 * 1024), { level: 9 });
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
      res.end(bomb);
    });
    const cap = 1024 * 1024;
    const r = expectKind(
      await fetchPage(`${server.origin}/`, allowLoopback({ maxBodyBytes: cap, truncateBody: true })),
      'ok',
    );
    expect(r.truncated).toBe(true);
    expect(r.body.length).toBe(cap);
  });

  it('refuses a declared Content-Length over the cap without reading', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html', 'content-length': String(20 * 1024 * 1024) });
      res.write(Buffer.alloc(1024));
    });
    const r = expectKind(await fetchPage(`${server.origin}/`, allowLoopback()), 'too-large');
    expect(r.bytes).toBe(0);
  });

  it('cuts a gzip bomb on its decompressed size', async () => {
    const bomb = zlib.gzipSync(Buffer.alloc(64 * 1024 * 1024), { level: 9 });
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
      res.end(bomb);
    });
    const cap = 1024 * 1024;
    const started = performance.now();
    const r = expectKind(
      await fetchPage(`${server.origin}/`, allowLoopback({ maxBodyBytes: cap })),
      'too-large',
    );
    expect(bomb.length).toBeLessThan(cap);
    expect(r.wireBytes).toBeLessThanOrEqual(bomb.length);
    expect(r.bytes).toBeGreaterThan(cap);
    expect(r.bytes).toBeLessThan(cap + 512 * 1024);
    expect(performance.now() - started).toBeLessThan(3_000);
  });

  it('cuts a trickling body at bodyTimeoutMs in total', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.flushHeaders();
      const timer = setInterval(() => res.write('x'), 100);
      res.on('close', () => clearInterval(timer));
    });
    const started = performance.now();
    const r = expectKind(
      await fetchPage(`${server.origin}/`, allowLoopback({ bodyTimeoutMs: 500 })),
      'network-error',
    );
    const elapsedMs = performance.now() - started;
    expect(r).toMatchObject({ code: 'ETIMEDOUT', timeout: 'body', status: 200 });
    expect(r.bytes).toBeGreaterThan(0);
    expect(elapsedMs).toBeGreaterThanOrEqual(450);
    expect(elapsedMs).toBeLessThan(1_500);
  });

  it('times out waiting for headers', async () => {
    const server = await startServer(() => {});
    const r = expectKind(
      await fetchPage(`${server.origin}/`, allowLoopback({ headersTimeoutMs: 300 })),
      'network-error',
    );
    expect(r).toMatchObject({ code: 'ETIMEDOUT', timeout: 'headers' });
    expect(r.status).toBeUndefined();
    // undici checks headersTimeout on a coarse (~0.5-1 s) timer wheel.
    expect(r.timings.totalMs).toBeLessThan(2_500);
  });

  it('times out a name resolution that hangs as a connect timeout', async () => {
    const hang: Resolver = () => new Promise(() => {});
    const options = { userAgent: UA, allowHosts: ['slow.test'], resolve: hang, connectTimeoutMs: 200 };
    const r = expectKind(await fetchPage('http://slow.test/', options), 'network-error');
    expect(r).toMatchObject({ code: 'ETIMEDOUT', timeout: 'connect' });
  });

  it('reports a DNS failure and a refused connection', async () => {
    const fail: Resolver = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.test'), { code: 'ENOTFOUND' });
    };
    const dns = expectKind(
      await fetchPage('http://nowhere.test/', { userAgent: UA, allowHosts: [], resolve: fail }),
      'network-error',
    );
    expect(dns.code).toBe('ENOTFOUND');

    const closed = await startServer(() => {});
    const port = closed.port;
    await new Promise<void>((resolve) => servers.pop()?.close(() => resolve()));
    const refused = expectKind(
      await fetchPage(`http://127.0.0.1:${port}/`, allowLoopback()),
      'network-error',
    );
    expect(refused.code).toBe('ECONNREFUSED');
    expect(refused.timeout).toBeUndefined();
  });

  it('rejects with the abort reason when the signal aborts', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.flushHeaders();
    });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('cancelled by test')), 200);
    await expect(
      fetchPage(`${server.origin}/`, allowLoopback({ signal: controller.signal })),
    ).rejects.toThrow('cancelled by test');
  });

  it('validates options', async () => {
    await expect(fetchPage('http://127.0.0.1/', allowLoopback({ maxBodyBytes: -1 }))).rejects.toBeInstanceOf(
      InvalidFetchOptionsError,
    );
    await expect(
      fetchPage('http://127.0.0.1/', allowLoopback({ extraHeaders: { 'User-Agent': 'other' } })),
    ).rejects.toThrow(/user-agent/);
  });
});

describe('fetchPage: encodings and charsets', () => {
  const page = '<p>compressed café</p>'.repeat(50);

  it.each([
    ['gzip', (b: Buffer) => zlib.gzipSync(b)],
    ['deflate', (b: Buffer) => zlib.deflateSync(b)],
    ['deflate', (b: Buffer) => zlib.deflateRawSync(b)],
    ['br', (b: Buffer) => zlib.brotliCompressSync(b)],
  ])('decodes %s', async (encoding, compress) => {
    const body = compress(Buffer.from(page));
    const server = await startServer((_req, res) =>
      html(res, body, { 'content-encoding': encoding, 'content-length': body.length }),
    );
    const r = expectKind(await fetchPage(`${server.origin}/`, allowLoopback()), 'ok');
    expect(r.text).toBe(page);
    expect(r.wireBytes).toBe(body.length);
    expect(r.bytes).toBe(Buffer.byteLength(page));
  });

  it('reports corrupt compressed data as a network error', async () => {
    const server = await startServer((_req, res) =>
      html(res, 'definitely not gzip', { 'content-encoding': 'gzip' }),
    );
    const r = expectKind(await fetchPage(`${server.origin}/`, allowLoopback()), 'network-error');
    expect(r.code).toMatch(/^Z_/);
  });

  const CAFE_1252 = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x80]);
  const NIHONGO_SJIS = Buffer.from([0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea]);
  const wrap = (head: string, body: Buffer) =>
    Buffer.concat([Buffer.from(`<html><head>${head}</head><body>`), body, Buffer.from('</body></html>')]);

  it.each([
    [
      'windows-1252 via header',
      'text/html; charset=windows-1252',
      wrap('', CAFE_1252),
      'windows-1252',
      'café €',
    ],
    [
      'windows-1252 via meta',
      'text/html',
      wrap('<meta charset="windows-1252">', CAFE_1252),
      'windows-1252',
      'café €',
    ],
    ['shift_jis via header', 'text/html; charset=Shift_JIS', wrap('', NIHONGO_SJIS), 'shift_jis', '日本語'],
    [
      'shift_jis via meta',
      'text/html',
      wrap('<meta http-equiv="Content-Type" content="text/html; charset=shift_jis">', NIHONGO_SJIS),
      'shift_jis',
      '日本語',
    ],
    [
      'invalid UTF-8',
      'text/html; charset=utf-8',
      wrap('', Buffer.from([0x61, 0xff, 0x62])),
      'utf-8',
      'a\uFFFDb',
    ],
  ])('decodes %s', async (_name, contentType, body, charset, expected) => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': contentType });
      res.end(body);
    });
    const r = expectKind(await fetchPage(`${server.origin}/`, allowLoopback()), 'ok');
    expect(r.charset).toBe(charset);
    expect(r.text).toContain(`<body>${expected}</body>`);
    expect(r.body.equals(body)).toBe(true);
  });
});
