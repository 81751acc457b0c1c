/**
 * `Host` headers and URL authorities, for the guards that answer only the names a listening socket
 * serves (DNS rebinding: a page on `evil.example` re-points its name at 127.0.0.1, and its requests
 * still carry `Host: evil.example`). Pure, so any layer may use it: the API's guards
 * (api/cross-site-guards.ts) and the Temporal UI's (infra/ui-host-guard.ts).
 */

/** An authority split into a lower-cased name (IPv6 without brackets, no trailing dot) and its port. */
export interface Authority {
  name: string;
  port?: string;
}

/** Parses `Host` or a URL authority; undefined when it is not one (userinfo, a path, a bad port). */
export function parseAuthority(authority: string): Authority | undefined {
  const value = authority.trim().toLowerCase();
  if (value === '') return undefined;
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    if (end < 0) return undefined;
    const rest = value.slice(end + 1);
    if (rest !== '' && !/^:\d{1,5}$/.test(rest)) return undefined;
    return { name: value.slice(1, end), ...(rest ? { port: rest.slice(1) } : {}) };
  }
  const match = /^([^:/\s@]+?)\.?(?::(\d{1,5}))?$/.exec(value);
  if (!match?.[1]) return undefined;
  return { name: match[1], ...(match[2] ? { port: match[2] } : {}) };
}

/**
 * The names a socket bound to `boundAddress` on `port` serves to a browser: `localhost` and the
 * bound address itself, each with that port (a browser leaves out only port 80).
 * `Host: evil.example:<port>`, or the right name with another port, are not among them.
 */
export function isServedAuthority(authority: string, boundAddress: string, port: number): boolean {
  const host = parseAuthority(authority);
  if (!host || Number(host.port ?? 80) !== port) return false;
  const bound = boundAddress.toLowerCase().replace(/^\[|\]$/g, '');
  return host.name === 'localhost' || host.name === bound;
}

/**
 * Whether an `Origin` header names one of the authorities served (see isServedAuthority). `null`
 * (a sandboxed frame, a file) and any other scheme than http are foreign.
 */
export function isServedOrigin(origin: string, boundAddress: string, port: number): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' || url.pathname !== '/' || url.username || url.password) return false;
  return isServedAuthority(url.host, boundAddress, port);
}
