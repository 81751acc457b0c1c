/**
 * The Temporal Web UI answers any Host, so a DNS-rebinding page could read every workflow's input
 * and press its buttons. It listens on an internal port behind infra/ui-host-guard.ts, which answers
 * only `127.0.0.1:<port>` and `localhost:<port>` and refuses a foreign Origin on writes. First the
 * guard alone, in front of a small upstream that records what reaches it; then one real dev server,
 * through the port `gleaner dev` prints, with a real write action (terminate).
 */
import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import { connect } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isServedAuthority, isServedOrigin } from '../../domain/host-authority';
import { freePort } from '../../infra/free-port';
import { startTemporalDevServer, type TemporalDevServer } from '../../infra/temporal-cli';
import { startUiHostGuard, type UiHostGuard, UiHostGuardListenError } from '../../infra/ui-host-guard';

interface Answer {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
}

interface Call {
  method?: string;
  host?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

/** One request on a connection of its own (fetch would not let us name the Host). */
function call(url: string, { method = 'GET', host, headers = {}, body }: Call = {}): Promise<Answer> {
  const target = new URL(url);
  return new Promise((done, failed) => {
    const outgoing = request(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method,
        agent: false,
        headers: { host: host ?? target.host, ...headers },
      },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () =>
          done({
            status: answer.statusCode ?? 0,
            headers: answer.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        answer.on('error', failed);
      },
    );
    outgoing.on('error', failed);
    outgoing.end(body);
  });
}

/** Sends raw bytes and returns the status line of the answer. */
function rawStatusLine(port: number, text: string): Promise<string> {
  return new Promise((done, failed) => {
    const socket = connect({ host: '127.0.0.1', port });
    let received = '';
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
    });
    socket.on('end', () => done(received.split('\r\n')[0] ?? ''));
    socket.on('error', failed);
    socket.write(text);
  });
}

describe('host and origin rules', () => {
  it('serves localhost and the bound address with the port, nothing else', () => {
    expect(isServedAuthority('127.0.0.1:8233', '127.0.0.1', 8233)).toBe(true);
    expect(isServedAuthority('LocalHost.:8233', '127.0.0.1', 8233)).toBe(true);
    expect(isServedAuthority('[::1]:8233', '::1', 8233)).toBe(true);
    expect(isServedAuthority('[::1]:8233', '127.0.0.1', 8233)).toBe(false);
    expect(isServedAuthority('evil.example', '127.0.0.1', 8233)).toBe(false);
    expect(isServedAuthority('evil.example:8233', '127.0.0.1', 8233)).toBe(false);
    expect(isServedAuthority('127.0.0.1:8234', '127.0.0.1', 8233)).toBe(false);
    expect(isServedAuthority('127.0.0.1', '127.0.0.1', 8233)).toBe(false);
    expect(isServedAuthority('127.0.0.1', '127.0.0.1', 80)).toBe(true);
    expect(isServedAuthority('user@127.0.0.1:8233', '127.0.0.1', 8233)).toBe(false);
    expect(isServedAuthority('', '127.0.0.1', 8233)).toBe(false);
    expect(isServedOrigin('http://localhost:8233', '127.0.0.1', 8233)).toBe(true);
    expect(isServedOrigin('http://127.0.0.1:8233', '127.0.0.1', 8233)).toBe(true);
    expect(isServedOrigin('https://127.0.0.1:8233', '127.0.0.1', 8233)).toBe(false);
    expect(isServedOrigin('http://evil.example:8233', '127.0.0.1', 8233)).toBe(false);
    expect(isServedOrigin('null', '127.0.0.1', 8233)).toBe(false);
  });
});

describe('startUiHostGuard', () => {
  let upstream: Server;
  let upstreamPort: number;
  let guard: UiHostGuard;
  const seen: Array<{ method: string; url: string; headers: IncomingMessage['headers']; bodyBytes: number }> =
    [];

  beforeAll(async () => {
    upstream = createServer((req, res) => {
      let bodyBytes = 0;
      req.on('data', (chunk: Buffer) => {
        bodyBytes += chunk.length;
      });
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, bodyBytes });
        res.setHeader('set-cookie', ['a=1; Path=/', 'b=2; Path=/']);
        res.setHeader('x-upstream', 'yes');
        res.writeHead(req.url === '/missing' ? 404 : 200, { 'content-type': 'text/plain' });
        // Streamed back in pieces, larger than one socket read.
        for (let i = 0; i < 64; i++) res.write(`${'x'.repeat(1023)}\n`);
        res.end(`${req.method} ${req.url} ${bodyBytes}`);
      });
    });
    await new Promise<void>((listening) => upstream.listen(0, '127.0.0.1', () => listening()));
    const address = upstream.address();
    upstreamPort = typeof address === 'object' && address ? address.port : 0;
    guard = await startUiHostGuard({ target: { host: '127.0.0.1', port: upstreamPort } });
  });

  afterAll(async () => {
    await guard?.close();
    await new Promise((closed) => upstream?.close(closed));
  });

  it('forwards a request it serves: method, path, headers and bodies both ways', async () => {
    const body = Buffer.alloc(1024 * 1024, 'a');
    const answer = await call(`${guard.url}/api/v1/thing?query=a%20b`, {
      method: 'PUT',
      headers: {
        'content-type': 'application/json',
        'x-csrf-token': 't',
        connection: 'x-secret, close',
        'x-secret': 's',
      },
      body,
    });
    expect(answer.status).toBe(200);
    expect(answer.headers['x-upstream']).toBe('yes');
    expect(answer.headers['set-cookie']).toEqual(['a=1; Path=/', 'b=2; Path=/']);
    expect(answer.body.length).toBe(64 * 1024 + `PUT /api/v1/thing?query=a%20b ${body.length}`.length);
    expect(answer.body.endsWith(`PUT /api/v1/thing?query=a%20b ${body.length}`)).toBe(true);
    const last = seen.at(-1);
    expect(last?.headers.host).toBe(`127.0.0.1:${guard.port}`);
    expect(last?.headers['x-csrf-token']).toBe('t');
    // Named in Connection: a header of that hop only.
    expect(last?.headers['x-secret']).toBeUndefined();

    expect((await call(`${guard.url}/missing`, { host: `localhost:${guard.port}` })).status).toBe(404);
  });

  it('answers 421 to any other Host, and the UI never sees the request', async () => {
    const before = seen.length;
    for (const host of [
      'evil.example',
      `evil.example:${guard.port}`,
      `127.0.0.1:${upstreamPort}`,
      '127.0.0.1',
    ]) {
      const answer = await call(`${guard.url}/api/v1/namespaces/default/workflows?query=`, { host });
      expect(answer.status, host).toBe(421);
      expect(answer.headers['content-type']).toMatch(/^text\/plain/);
      expect(answer.body).toMatch(/does not serve the host/);
    }
    const post = await call(`${guard.url}/api/v1/x`, { method: 'POST', host: 'evil.example', body: '{}' });
    expect(post.status).toBe(421);
    expect(seen.length).toBe(before);
  });

  it('refuses a foreign Origin on writes, not on reads', async () => {
    const before = seen.length;
    for (const origin of ['http://evil.example', `http://evil.example:${guard.port}`, 'null']) {
      const answer = await call(`${guard.url}/api/v1/x`, { method: 'POST', headers: { origin }, body: '{}' });
      expect(answer.status, origin).toBe(403);
      expect(answer.body).toMatch(/from another origin/);
    }
    const del = await call(`${guard.url}/api/v1/x`, {
      method: 'DELETE',
      headers: { origin: 'http://evil.example' },
    });
    expect(del.status).toBe(403);
    expect(seen.length).toBe(before);

    for (const origin of [guard.url, `http://localhost:${guard.port}`]) {
      const answer = await call(`${guard.url}/api/v1/x`, { method: 'POST', headers: { origin }, body: '{}' });
      expect(answer.status, origin).toBe(200);
    }
    expect((await call(`${guard.url}/api/v1/x`, { method: 'POST', body: '{}' })).status).toBe(200);
    // A read with a foreign Origin is the same-origin policy's to keep; the Host already matched.
    expect((await call(`${guard.url}/`, { headers: { origin: 'http://evil.example' } })).status).toBe(200);
  });

  it('forwards only origin-form targets', async () => {
    const line = await rawStatusLine(
      guard.port,
      `GET http://evil.example/api/v1/x HTTP/1.1\r\nHost: 127.0.0.1:${guard.port}\r\nConnection: close\r\n\r\n`,
    );
    expect(line).toMatch(/^HTTP\/1\.1 400 /);
  });

  it('answers 502 when the UI is down, and refuses a taken port', async () => {
    const deadPort = await freePort();
    const lonely = await startUiHostGuard({ target: { host: '127.0.0.1', port: deadPort } });
    try {
      const answer = await call(`${lonely.url}/`);
      expect(answer.status).toBe(502);
      await expect(
        startUiHostGuard({ port: lonely.port, target: { host: '127.0.0.1', port: deadPort } }),
      ).rejects.toThrow(UiHostGuardListenError);
    } finally {
      await lonely.close();
    }
    await expect(call(`${lonely.url}/`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});

describe('the dev server behind the guard', () => {
  let server: TemporalDevServer | undefined;
  let connection: Connection | undefined;
  let uiPort: number;
  const workflowId = `ui-guard-${Date.now()}`;

  beforeAll(async () => {
    uiPort = await freePort();
    server = await startTemporalDevServer({ uiPort });
    connection = await Connection.connect({ address: server.address });
    // Never picked up (no worker on the queue): it only has to be listed, then terminated.
    await new Client({ connection }).workflow.start('crawlSite', {
      taskQueue: 'ui-guard-nobody',
      workflowId,
      args: [{ allowHosts: ['intranet.example'] }],
    });
  }, 120_000);

  afterAll(async () => {
    await connection?.close();
    await server?.stop();
  });

  it('serves the UI on the port asked for, only to its own names', async () => {
    const ui = server?.uiUrl as string;
    expect(ui).toBe(`http://127.0.0.1:${uiPort}`);
    const root = await call(`${ui}/`);
    expect(root.status).toBe(200);
    expect(root.body).toMatch(/<html/i);

    // The UI's own gRPC connection comes up a moment after the server answers: ~1 s.
    const list = `${ui}/api/v1/namespaces/default/workflows?query=`;
    const deadline = Date.now() + 30_000;
    let answer = await call(list);
    while (answer.status !== 200 && Date.now() < deadline) {
      await new Promise((pause) => setTimeout(pause, 100));
      answer = await call(list);
    }
    expect(answer.status).toBe(200);
    expect(answer.body).toContain(workflowId);
    expect((await call(list, { host: `localhost:${uiPort}` })).body).toContain(workflowId);

    const rebound = await call(list, { host: 'evil.example' });
    expect(rebound.status).toBe(421);
    expect(rebound.body).not.toContain(workflowId);
    expect((await call(`${ui}/`, { host: `evil.example:${uiPort}` })).status).toBe(421);
  });

  it("keeps the UI's write actions for its own origin", async () => {
    const ui = server?.uiUrl as string;
    // The UI's CSRF cookie, as a browser on the UI holds it.
    const root = await call(`${ui}/`);
    const cookie = String(root.headers['set-cookie']?.[0] ?? '').split(';')[0] ?? '';
    const token = cookie.split('=')[1] ?? '';
    expect(token).not.toBe('');
    const terminate = (origin: string) =>
      call(`${ui}/api/v1/namespaces/default/workflows/${workflowId}/terminate`, {
        method: 'POST',
        headers: { origin, cookie, 'x-csrf-token': token, 'content-type': 'application/json' },
        body: JSON.stringify({ reason: 'through the guard' }),
      });
    const handle = new Client({ connection: connection as Connection }).workflow.getHandle(workflowId);

    expect((await terminate('http://evil.example')).status).toBe(403);
    expect((await handle.describe()).status.name).toBe('RUNNING');
    const own = await terminate(ui);
    expect(own.status, own.body).toBe(200);
    expect((await handle.describe()).status.name).toBe('TERMINATED');
  });

  it("limits the frontend's HTTP API to loopback names", async () => {
    const url = `http://${server?.httpAddress}/api/v1/namespaces/default/workflows`;
    const rebound = await call(url, { host: 'evil.example' });
    expect(rebound.status).toBe(403);
    expect(rebound.body).not.toContain(workflowId);
    expect((await call(url)).body).toContain(workflowId);
  });

  it('closes the guard with the server', async () => {
    await connection?.close();
    connection = undefined;
    await server?.stop();
    await expect(call(`http://127.0.0.1:${uiPort}/`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    server = undefined;
  });
});
