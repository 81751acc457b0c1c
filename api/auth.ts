/**
 * Who may call what. Routes declare an access level in their config:
 * - `control` (start, pause, resume, cancel crawls): a Bearer token equal to GLEANER_API_TOKEN;
 *   with no token configured, only clients on the loopback interface.
 * - `read` (search, pages, graph, crawl listings): open, unless `searchOpen` is false, in which
 *   case they are guarded like `control`.
 * - `open` (health, metrics, the OpenAPI document): always open, for probes and scrapers.
 * Before any of these, cross-site-guards.ts refuses foreign Host names, and on state changes a
 * foreign Origin or a body that is not JSON: a loopback socket may be a browser running a stranger's page.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from './errors';

export type Access = 'control' | 'read' | 'open';

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access;
  }
}

export interface AuthOptions {
  token?: string;
  /** Reads (search, pages, graph, crawl listings) need no token. @default true */
  searchOpen?: boolean;
}

export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return v4.startsWith('127.') || address === '::1';
}

// Hashing first makes the comparison constant-time whatever the lengths.
function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

function checkGuarded(request: FastifyRequest, token: string | undefined): void {
  if (!token) {
    if (isLoopback(request.socket.remoteAddress)) return;
    throw new ApiError(
      403,
      'this endpoint accepts only loopback clients while GLEANER_API_TOKEN is unset; set it on the server and send "Authorization: Bearer <token>"',
    );
  }
  const header = request.headers.authorization;
  if (!header) throw new ApiError(401, 'missing "Authorization: Bearer <token>" header');
  const match = /^Bearer\s+(.+)$/i.exec(header);
  if (!match?.[1]) throw new ApiError(401, 'the Authorization header must be "Bearer <token>"');
  if (!sameSecret(match[1].trim(), token)) throw new ApiError(403, 'invalid API token');
}

export function installAuth(app: FastifyInstance, options: AuthOptions): void {
  const searchOpen = options.searchOpen ?? true;
  app.addHook('onRequest', async (request) => {
    const access = request.routeOptions.config?.access ?? 'open';
    if (access === 'open' || (access === 'read' && searchOpen)) return;
    checkGuarded(request, options.token);
  });
}
