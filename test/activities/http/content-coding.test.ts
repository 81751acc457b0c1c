/**
 * Bounded decoding: a Content-Encoding chain longer than two codings is refused before its body is
 * read, two codings still decode, and the decoded-size cap holds for every layer of a chain.
 * Every server here listens on 127.0.0.1.
 */
import { promises as dns } from 'node:dns';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fetchPage } from '../../../activities/http/fetch-page.ts';
import type { FetchPageResult } from '../../../activities/http/fetch-result.ts';
import { MAX_CONTENT_CODINGS } from '../../../activities/http/read-body.ts';
import { closeServers } from '../../../testbed/close-servers';

const servers: http.Server[] = [];

afterEach(async () => {
  await closeServers(servers);
});

interface Served {
  readonly url: string;
  /** Body bytes the server managed to hand to the socket before the client went away. */
  readonly sentBytes: () => number;
}

/** Serves `body` as HTML under the given Content-Encoding, in 16 KiB writes that respect backpressure. */
async function serveEncoded(contentEncoding: string, body: Buffer): Promise<Served> {
  let sent = 0;
  const server = http.createServer((_req, res) => {
    res.on('error', () => {});
    res.writeHead(200, {
      'content-type': 'text/html; charset=utf-8',
      'content-encoding': contentEncoding,
      'content-length': body.length,
    });
    const pump = () => {
      while (sent < body.length) {
        const chunk = body.subarray(sent, sent + 16 * 1024);
        sent += chunk.length;
        if (!res.write(chunk)) {
          res.once('drain', pump);
          return;
        }
      }
      res.end();
    };
    pump();
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/`, sentBytes: () => sent };
}

const options = (extra: { maxBodyBytes?: number; bodyTimeoutMs?: number } = {}) => ({
  userAgent: 'gleaner-test/1.0 (+https://example.invalid/bot)',
  allowHosts: ['127.0.0.1'],
  ...extra,
});

function expectKind<K extends FetchPageResult['kind']>(
  result: FetchPageResult,
  kind: K,
): Extract<FetchPageResult, { kind: K }> {
  const { kind: got, timings, wireBytes, bytes } = result;
  expect({ kind: got, timings, wireBytes, bytes }).toMatchObject({ kind });
  return result as Extract<FetchPageResult, { kind: K }>;
}

/** A gzip member whose header carries a comment of `commentBytes` bytes, around a tiny payload. */
function gzipWithComment(payload: Buffer, commentBytes: number): Buffer {
  const plain = zlib.gzipSync(payload);
  // Flags byte 3: FCOMMENT (0x10). The comment follows the 10-byte header, zero-terminated.
  const header = Buffer.from(plain.subarray(0, 10));
  header[3] = 0x10;
  return Buffer.concat([header, Buffer.alloc(commentBytes, 'a'), Buffer.from([0]), plain.subarray(10)]);
}

const PAGE = '<html><body><p>twice compressed</p></body></html>';

describe('fetchPage: content-coding chains', () => {
  let chain3000: Buffer;

  beforeAll(() => {
    // A real, decodable 3,000-layer chain (stored blocks, so building it takes a fraction of a second).
    chain3000 = Buffer.from(PAGE);
    for (let i = 0; i < 3000; i++) chain3000 = zlib.gzipSync(chain3000, { level: 0 });
  });

  it(`refuses a 3,000-coding chain without reading it, and without holding the threadpool`, async () => {
    const served = await serveEncoded(Array(3000).fill('gzip').join(','), chain3000);
    const bodyTimeoutMs = 5_000;
    const started = performance.now();
    const fetching = fetchPage(served.url, options({ bodyTimeoutMs }));
    // DNS lookups share libuv's threadpool with zlib: one started alongside must not wait behind it.
    const lookupStarted = performance.now();
    const lookupMs = dns.lookup('localhost').then(() => performance.now() - lookupStarted);
    const r = expectKind(await fetching, 'unsupported-content-type');
    const elapsedMs = performance.now() - started;
    expect(r.contentEncoding).toBe(`chain of 3000 codings (at most ${MAX_CONTENT_CODINGS})`);
    expect(r.wireBytes).toBe(0);
    expect(r.bytes).toBe(0);
    // Generous bounds that still catch a decode: the old code ran into the body timeout.
    expect(elapsedMs).toBeLessThan(bodyTimeoutMs / 2);
    expect(await lookupMs).toBeLessThan(bodyTimeoutMs / 2);
  });

  it('refuses three codings, decodes two in the order they were applied', async () => {
    const twice = zlib.brotliCompressSync(zlib.gzipSync(Buffer.from(PAGE)));
    const ok = expectKind(await fetchPage((await serveEncoded('gzip, br', twice)).url, options()), 'ok');
    expect(ok.text).toBe(PAGE);
    expect(ok.wireBytes).toBe(twice.length);

    const gzip2 = zlib.gzipSync(zlib.gzipSync(Buffer.from(PAGE)));
    const ok2 = expectKind(
      await fetchPage((await serveEncoded('gzip, identity, gzip', gzip2)).url, options()),
      'ok',
    );
    expect(ok2.text).toBe(PAGE);

    const thrice = zlib.gzipSync(gzip2);
    const refused = expectKind(
      await fetchPage((await serveEncoded('gzip, gzip, gzip', thrice)).url, options()),
      'unsupported-content-type',
    );
    expect(refused.contentEncoding).toBe('chain of 3 codings (at most 2)');
  });

  it('cuts a gzip bomb nested in gzip at the decoded-size cap of the inner layer', async () => {
    // The inner member expands to 64 MiB of header comment and yields a few bytes of page: only a
    // cap on each layer's output sees the 64 MiB.
    const cap = 1024 * 1024;
    const inner = gzipWithComment(Buffer.from(PAGE), 64 * 1024 * 1024);
    const outer = zlib.gzipSync(inner, { level: 9 });
    expect(outer.length).toBeLessThan(cap);
    const served = await serveEncoded('gzip, gzip', outer);
    const r = expectKind(await fetchPage(served.url, options({ maxBodyBytes: cap })), 'too-large');
    expect(r.limitBytes).toBe(cap);
    expect(r.wireBytes).toBeLessThanOrEqual(outer.length);
    expect(r.bytes).toBe(0);
  });

  it('with truncateBody still stops a nested bomb (at twice the cap per layer) and keeps what decoded', async () => {
    const cap = 1024 * 1024;
    const inner = gzipWithComment(Buffer.from(PAGE), 64 * 1024 * 1024);
    const outer = zlib.gzipSync(inner, { level: 9 });
    const served = await serveEncoded('gzip, gzip', outer);
    const r = expectKind(
      await fetchPage(served.url, { ...options({ maxBodyBytes: cap }), truncateBody: true }),
      'ok',
    );
    expect(r.truncated).toBe(true);
    expect(r.bytes).toBe(0);
  });
});
