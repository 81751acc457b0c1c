/**
 * gleaner against a Temporal frontend that demands mutual TLS: a TLS proxy on loopback with the test
 * CA (test/fixtures/tls/) in front of a real dev server. With the CA, client certificate and key in
 * the Temporal CLI's variables, the client SDK, the worker SDK and the `gleaner` command (a whole
 * crawl, its workers polling through the proxy) connect; without the certificate the server's refusal
 * is one line that says so; bad variables stop the command before it connects. TEMPORAL_API_KEY is
 * seen arriving as the Authorization header by a TLS gRPC endpoint of our own.
 */
import { readFileSync } from 'node:fs';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crawlWorkflowId } from '../../domain/temporal-names';
import { connectTemporal } from '../../infra/temporal-connect';
import { temporalConnectionOptions } from '../../infra/temporal-connection-options';
import { addGeneratedPages } from '../../testbed/generated-site';
import { lastLine, runGleaner } from '../../testbed/gleaner-process';
import { type SiteServer, serveSite } from '../../testbed/site-server';
import { startTestStack, type TestStack } from '../../testbed/stack';
import { startTlsProxy, type TlsProxy, tlsFixture } from '../../testbed/tls-proxy';

let stack: TestStack;
let proxy: TlsProxy;
let site: SiteServer;
const PAGES = 3;

beforeAll(async () => {
  stack = await startTestStack({ workers: false });
  const [host, port] = stack.temporal.address.split(':');
  proxy = await startTlsProxy({ host: host as string, port: Number(port) });
  site = await serveSite(undefined);
  addGeneratedPages(site, PAGES);
});
afterAll(async () => {
  await proxy?.close();
  await site?.close();
  await stack?.close();
});

/** The Temporal CLI's variables for the proxy: mutual TLS with the test CA's client certificate. */
const mtlsEnv = () => ({
  TEMPORAL_ADDRESS: proxy.address,
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: tlsFixture('ca.pem'),
  TEMPORAL_TLS_CLIENT_CERT_PATH: tlsFixture('client.pem'),
  TEMPORAL_TLS_CLIENT_KEY_PATH: tlsFixture('client.key'),
});

describe('a Temporal frontend behind mutual TLS', () => {
  it('takes the client SDK and the worker SDK with the CA, client certificate and key', async () => {
    const options = temporalConnectionOptions(mtlsEnv());
    const accepted = proxy.accepted.length;
    const connection = await connectTemporal(proxy.address, options);
    try {
      const listed = await connection.workflowService.listWorkflowExecutions({ namespace: 'default' });
      expect(listed.executions).toEqual(expect.any(Array));
    } finally {
      await connection.close();
    }
    const native = await NativeConnection.connect({ address: proxy.address, ...options });
    try {
      const described = await native.workflowService.describeNamespace({ namespace: 'default' });
      expect(described.namespaceInfo?.name).toBe('default');
    } finally {
      await native.close();
    }
    expect(proxy.accepted.slice(accepted)).toEqual(['gleaner test client', 'gleaner test client']);
  });

  it('runs a whole `gleaner crawl` through it, its workers polling over mutual TLS', async () => {
    const env = { ...mtlsEnv(), DATABASE_URL: stack.postgres.url };
    const accepted = proxy.accepted.length;
    const crawl = await runGleaner(
      [
        'crawl',
        site.url,
        '--crawl-id',
        'over-mtls',
        '--allow-host',
        '127.0.0.1',
        '--delay-ms',
        '0',
        '--local-workers',
        '--wait',
        '--json',
      ],
      env,
    );
    expect(crawl.code, crawl.stderr).toBe(0);
    expect(JSON.parse(lastLine(crawl.stdout))).toMatchObject({ crawlId: 'over-mtls', pagesFetched: PAGES });
    // The client's connection and the workers' each came through the proxy with the certificate.
    expect(proxy.accepted.length - accepted).toBeGreaterThanOrEqual(2);
    // Seen from the plaintext side, the crawl ran on this dev server.
    const described = await stack.client.workflow.getHandle(crawlWorkflowId('over-mtls')).describe();
    expect(described.status.name).toBe('COMPLETED');

    const listed = await runGleaner(['schedule', 'list', '--json'], env);
    expect(listed.code, listed.stderr).toBe(0);
  });

  it('is refused without the client certificate, with one line that says what to set', async () => {
    const refused = proxy.refused.length;
    const result = await runGleaner(['schedule', 'list'], {
      TEMPORAL_ADDRESS: proxy.address,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: tlsFixture('ca.pem'),
      DATABASE_URL: stack.postgres.url,
    });
    expect(result.code).toBe(2);
    expect(lastLine(result.stderr)).toBe(
      `gleaner: cannot reach Temporal at ${proxy.address} over TLS: the server requires a client certificate; ` +
        'set TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH (ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED)',
    );
    // The proxy refused a TLS client for its missing certificate (not a plaintext one, say).
    expect(proxy.refused.slice(refused)).toContainEqual(
      expect.stringMatching(/^ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE: /),
    );
  });

  it('stops `gleaner` on a bad variable before anything connects', async () => {
    const before = proxy.accepted.length + proxy.refused.length;
    const base = { ...mtlsEnv(), DATABASE_URL: stack.postgres.url };
    const cases: Array<[Record<string, string>, string]> = [
      [{ TEMPORAL_TLS: 'yes' }, 'gleaner: TEMPORAL_TLS must be true or false, not "yes"'],
      [
        { TEMPORAL_TLS_CLIENT_CERT_PATH: '/no/such/client.pem' },
        'gleaner: TEMPORAL_TLS_CLIENT_CERT_PATH=/no/such/client.pem cannot be read: no such file',
      ],
      [
        { TEMPORAL_TLS_CLIENT_KEY_PATH: '' },
        'gleaner: TEMPORAL_TLS_CLIENT_CERT_PATH is set without its private key: set TEMPORAL_TLS_CLIENT_KEY_PATH or TEMPORAL_TLS_CLIENT_KEY_DATA',
      ],
      [
        { TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: 'true' },
        'gleaner: TEMPORAL_TLS_DISABLE_HOST_VERIFICATION is not supported (the Temporal TypeScript SDK always verifies the server name): ' +
          "set TEMPORAL_TLS_SERVER_NAME to a name in the server's certificate instead",
      ],
    ];
    for (const [change, message] of cases) {
      const result = await runGleaner(['schedule', 'list'], { ...base, ...change });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr.trim()).toBe(message);
    }
    // `gleaner mcp` checks them as it starts, not at its first crawl tool call.
    const mcp = await runGleaner(['mcp'], { ...base, TEMPORAL_TLS: 'yes' });
    expect(mcp.code).toBe(2);
    expect(mcp.stderr.trim()).toBe('gleaner: TEMPORAL_TLS must be true or false, not "yes"');
    expect(proxy.accepted.length + proxy.refused.length).toBe(before);
  });
});

describe('TEMPORAL_API_KEY', () => {
  let endpoint: http2.Http2SecureServer;
  let address: string;
  const authorizations: Array<string | undefined> = [];
  const sessions = new Set<http2.ServerHttp2Session>();

  beforeAll(async () => {
    // A gRPC endpoint that notes each call's Authorization header and refuses the call.
    endpoint = http2.createSecureServer({
      key: readFileSync(tlsFixture('server.key')),
      cert: readFileSync(tlsFixture('server.pem')),
    });
    endpoint.on('session', (session) => sessions.add(session));
    endpoint.on('stream', (stream, headers) => {
      authorizations.push(headers.authorization as string | undefined);
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '16', 'grpc-message': 'noted' }));
      stream.resume();
      stream.on('end', () => stream.end());
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    address = `127.0.0.1:${(endpoint.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    // close() waits for every session, and a client's idle one may stay open.
    for (const session of sessions) session.destroy();
    await new Promise<void>((resolve) => endpoint.close(() => resolve()));
  });

  it('goes to the server as a bearer token over TLS, from both SDKs and from `gleaner`', async () => {
    const options = temporalConnectionOptions({
      TEMPORAL_ADDRESS: address,
      TEMPORAL_API_KEY: 'test-api-key',
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: tlsFixture('ca.pem'),
    });
    // Each connection's first call is refused; the header has arrived by then.
    await expect(connectTemporal(address, options)).rejects.toThrow(
      `cannot reach Temporal at ${address} over TLS: Failed to connect to Temporal server: 16 UNAUTHENTICATED: noted`,
    );
    await expect(NativeConnection.connect({ address, ...options })).rejects.toThrow(/noted/);
    const result = await runGleaner(['schedule', 'list'], {
      TEMPORAL_ADDRESS: address,
      TEMPORAL_API_KEY: 'test-api-key',
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: tlsFixture('ca.pem'),
      DATABASE_URL: stack.postgres.url,
    });
    expect(result.code).toBe(2);
    expect(lastLine(result.stderr)).toMatch(
      /^gleaner: cannot reach Temporal at .*: 16 UNAUTHENTICATED: noted$/,
    );
    expect(authorizations.length).toBeGreaterThanOrEqual(3);
    expect(new Set(authorizations)).toEqual(new Set(['Bearer test-api-key']));
  });
});
