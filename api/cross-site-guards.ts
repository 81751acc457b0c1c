/**
 * Doors a web page in a browser on the same machine could otherwise walk through. The socket
 * address says a request came from loopback, not who asked for it: a browser is a loopback client
 * that runs strangers' scripts.
 * - DNS rebinding: a page on `evil.example` re-points its own name at 127.0.0.1 and then reads our
 *   answers as same-origin. Its requests still carry `Host: evil.example`, so only Host names this
 *   API serves are answered (loopback names and the ones the operator lists); others get 421.
 * - Cross-site requests: a form or a `no-cors` fetch can POST without a preflight, but only with a
 *   "simple" content type. State-changing routes therefore demand `Content-Type: application/json`
 *   (415 otherwise) and refuse an `Origin` that is not this API's own (403). Non-browser clients
 *   send no Origin and are unaffected.
 */

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { parseAuthority } from '../domain/host-authority';
import { API_ERROR_CODES, ApiError } from './errors';

export interface CrossSiteGuardOptions {
  /**
   * Host names (or `name:port`) served besides the loopback names, e.g. the name a reverse proxy or
   * the operator's clients use. From GLEANER_API_HOSTS or `--allowed-host`.
   * @default []
   */
  allowedHosts?: readonly string[];
}

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
// Methods a browser sends cross-site without a preflight carry a body only with these; we demand JSON.
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/** Names that always mean this machine; a rebinding page cannot make a browser send them for its own origin. */
export function isLoopbackName(name: string): boolean {
  return name === 'localhost' || name === '::1' || /^127(?:\.\d{1,3}){3}$/.test(name);
}

/** Whether `Host: <authority>` names this API: a loopback name or a configured one (any port unless it names one). */
export function isAllowedHost(authority: string, allowedHosts: readonly string[]): boolean {
  const host = parseAuthority(authority);
  if (!host) return false;
  if (isLoopbackName(host.name)) return true;
  return allowedHosts.some((entry) => {
    const allowed = parseAuthority(entry);
    return allowed?.name === host.name && (allowed.port === undefined || allowed.port === host.port);
  });
}

/** Hosts from GLEANER_API_HOSTS (comma or space separated). */
export function allowedHostsFromEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  return (env.GLEANER_API_HOSTS ?? '')
    .split(/[\s,]+/)
    .map((host) => host.trim())
    .filter(Boolean);
}

function checkHost(request: FastifyRequest, allowedHosts: readonly string[]): void {
  const host = request.headers.host;
  if (host && isAllowedHost(host, allowedHosts)) return;
  throw new ApiError(
    421,
    `this API does not serve the host ${JSON.stringify((host ?? '').slice(0, 200))}; it answers loopback names ` +
      '(localhost, 127.0.0.1, [::1]) and the hosts listed in GLEANER_API_HOSTS or --allowed-host',
    API_ERROR_CODES.hostNotAllowed,
  );
}

function checkOrigin(request: FastifyRequest): void {
  const origin = request.headers.origin;
  if (origin === undefined) return;
  let originHost: string | undefined;
  try {
    const url = new URL(origin);
    if (url.protocol === 'http:' || url.protocol === 'https:') originHost = url.host;
  } catch {}
  const requestHost = parseAuthority(request.headers.host ?? '');
  const fromOrigin = originHost ? parseAuthority(originHost) : undefined;
  // URL drops a default port, so compare with the Host header's port where it names 80 or 443.
  const samePort = (a?: string, b?: string) =>
    (a ?? '') === (b ?? '') || (a === undefined && (b === '80' || b === '443'));
  if (
    fromOrigin &&
    requestHost &&
    fromOrigin.name === requestHost.name &&
    samePort(fromOrigin.port, requestHost.port)
  )
    return;
  throw new ApiError(
    403,
    `requests that change state are refused from another origin (Origin ${JSON.stringify(origin.slice(0, 200))})`,
    API_ERROR_CODES.originNotAllowed,
  );
}

function isJson(contentType: string | undefined): boolean {
  return contentType?.split(';')[0]?.trim().toLowerCase() === 'application/json';
}

function checkJsonBody(request: FastifyRequest): void {
  const contentType = request.headers['content-type'];
  // DELETE always needs a preflight from a browser; its body, if any, must still be JSON.
  if (isJson(contentType) || (!BODY_METHODS.has(request.method) && contentType === undefined)) return;
  throw new ApiError(
    415,
    `${request.method} needs a JSON body with "Content-Type: application/json" (send {} when there is nothing to say)` +
      (contentType ? `, got "${contentType}"` : ''),
    API_ERROR_CODES.jsonBodyRequired,
  );
}

/** Registers the guards before auth, so a rebinding page learns nothing, not even 401 or 403. */
export function installCrossSiteGuards(app: FastifyInstance, options: CrossSiteGuardOptions = {}): void {
  const allowedHosts = options.allowedHosts ?? [];
  app.addHook('onRequest', async (request) => {
    checkHost(request, allowedHosts);
    if (!STATE_CHANGING.has(request.method)) return;
    checkOrigin(request);
    checkJsonBody(request);
  });
}
