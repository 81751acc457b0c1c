/**
 * The Temporal Web UI answers any `Host`, so a web page in the operator's browser could read every
 * workflow's input (crawl specs, allowed hosts, notify URLs) and press its buttons by DNS rebinding:
 * its own name re-pointed at 127.0.0.1 still arrives as `Host: evil.example`. The dev server's UI
 * therefore listens on an internal loopback port, and this reverse proxy on the advertised port
 * forwards only requests that name it (`127.0.0.1:<port>`, `localhost:<port>`): any other Host
 * gets 421, and a request other than GET or HEAD whose `Origin` is foreign gets 403. Request and
 * answer are streamed through unchanged apart from hop-by-hop headers.
 */
import { Agent, createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import { pipeline } from 'node:stream';
import { isServedAuthority, isServedOrigin } from '../domain/host-authority';

export interface UiHostGuardOptions {
  /** Loopback address the guard listens on. @default '127.0.0.1' */
  host?: string;
  /** The port users are given; 0 lets the kernel choose. @default 0 */
  port?: number;
  /** Where the UI itself listens. */
  target: { host: string; port: number };
}

export interface UiHostGuard {
  /** The port the guard listens on (the one users are given). */
  port: number;
  /** `http://host:port` of the guard. */
  url: string;
  /** Stops listening and drops open connections. */
  close(): Promise<void>;
}

/** Thrown when the guard cannot listen (the port is taken, the address is not ours). */
export class UiHostGuardListenError extends Error {
  override readonly name = 'UiHostGuardListenError';
}

// Headers of one connection, not of the message (RFC 9110 §7.6.1); Node sets its own.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);
const SAFE_METHODS = new Set(['GET', 'HEAD']);
const SHOWN_HEADER_CHARS = 200;

function withoutHopByHop(headers: NodeJS.Dict<string | string[]>): NodeJS.Dict<string | string[]> {
  const named = new Set(
    String(headers.connection ?? '')
      .split(',')
      .map((name) => name.trim().toLowerCase()),
  );
  return Object.fromEntries(
    Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name) && !named.has(name)),
  );
}

function refuse(response: ServerResponse, status: number, reason: string): void {
  response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
  response.end(`${reason}\n`);
}

/** Why a request may not pass, or undefined when it may. */
function refusal(req: IncomingMessage, host: string, port: number): [number, string] | undefined {
  const hostHeader = req.headers.host ?? '';
  if (!isServedAuthority(hostHeader, host, port)) {
    const shownHost = host.includes(':') ? `[${host}]` : host;
    return [
      421,
      `Temporal Web here does not serve the host ${JSON.stringify(hostHeader.slice(0, SHOWN_HEADER_CHARS))}; ` +
        `open it as http://${shownHost}:${port} or http://localhost:${port}`,
    ];
  }
  // Absolute-form targets name a host of their own, which the UI would believe over Host.
  if (!req.url?.startsWith('/')) return [400, 'only origin-form request targets (a path) are forwarded'];
  const origin = req.headers.origin;
  if (origin !== undefined && !SAFE_METHODS.has(req.method ?? '') && !isServedOrigin(origin, host, port)) {
    return [
      403,
      `${req.method} requests from another origin are refused (Origin ${JSON.stringify(origin.slice(0, SHOWN_HEADER_CHARS))})`,
    ];
  }
  return undefined;
}

/** Starts the guard; resolves once it listens. */
export async function startUiHostGuard(options: UiHostGuardOptions): Promise<UiHostGuard> {
  const host = options.host ?? '127.0.0.1';
  const { target } = options;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  const agent = new Agent({ keepAlive: true });
  // The kernel's choice when asked for port 0; set before the first request can arrive.
  let port = options.port ?? 0;

  const server = createServer((req, res) => {
    const refused = refusal(req, host, port);
    if (refused) {
      // The body is not wanted; reading it lets the connection be reused.
      req.resume();
      refuse(res, ...refused);
      return;
    }
    const upstream = request(
      {
        agent,
        host: target.host,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: withoutHopByHop(req.headers),
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, withoutHopByHop(answer.headers));
        pipeline(answer, res, () => {});
      },
    );
    upstream.on('error', (error) => {
      if (!res.headersSent) refuse(res, 502, `Temporal Web is not answering: ${error.message}`);
      else res.destroy();
    });
    // A client that goes away mid-request takes its upstream request with it (pipeline destroys it).
    pipeline(req, upstream, () => {});
  });
  // WebSocket or CONNECT upgrades are not the UI's; with no listener Node closes such sockets.

  await new Promise<void>((listening, failed) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      const why = error.code === 'EADDRINUSE' ? 'the port is taken by another process' : error.message;
      failed(
        new UiHostGuardListenError(`Temporal Web cannot listen on ${host}:${options.port ?? 0}: ${why}`),
      );
    });
    server.listen({ host, port: options.port ?? 0, exclusive: true }, () => listening());
  });
  const address = server.address();
  if (typeof address === 'object' && address) port = address.port;

  return {
    port,
    url: `http://${shownHost}:${port}`,
    close: async () => {
      await new Promise<void>((closed) => {
        server.close(() => closed());
        server.closeAllConnections();
      });
      agent.destroy();
    },
  };
}
