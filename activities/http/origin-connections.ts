/**
 * Connections kept open between requests to one origin. A crawl asks an origin for page after page, a
 * gap apart; a new TCP (and TLS) connection for each costs the server a handshake and the crawler a
 * connect on its event loop between the end of the politeness wait and the request. Each pool here
 * is pinned like the guard's one-shot client (`pinnedConnectOptions`): it can only connect to the
 * addresses the SSRF guard checked, and it is keyed by them, so a host that resolves elsewhere on a
 * later hop gets a pool of its own, never a connection the guard did not pass.
 */
import { Client } from 'undici';
import { type CheckedTarget, pinnedConnectOptions } from './ssrf-guard.ts';

/** Origins whose connections are kept at once; the least recently used closes beyond it. */
const MAX_ORIGINS = 256;
/** An origin unused this long has its connections closed (they have usually timed out by then). */
const IDLE_CLOSE_MS = 30_000;
/**
 * How long an idle socket is kept when the server does not say (`Keep-Alive: timeout=`); undici
 * takes the server's hint, less a second, when there is one. Longer than common politeness gaps, so
 * the next request of an origin finds its connection open.
 */
const KEEP_ALIVE_MS = 10_000;

interface Entry {
  /** Connections of this origin not in use now, the most recently returned last. */
  readonly idle: Client[];
  lastUsedMs: number;
  closed: boolean;
  /** False once a kept connection of this origin was closed under a request: no more reuse. */
  keep: boolean;
}

export interface OriginConnectionLimits {
  /** @default MAX_ORIGINS */
  maxOrigins?: number;
  /** @default IDLE_CLOSE_MS */
  idleCloseMs?: number;
}

/** One connection lent to one request; give it back with `release` once its body is read or dropped. */
export interface Lease {
  readonly client: Client;
  /** The connection carried an earlier request: the server may have closed it since. */
  readonly reused: boolean;
  /** `reusable` false (a network error, a body left unread) closes the connection instead. */
  release(reusable: boolean): void;
}

/**
 * Each request borrows a connection no other request is using, so an origin crawled with several
 * requests at once (`perOriginConcurrency`) gets a connection for each, and requests one after
 * another share one. (An undici `Pool` was tried: it opened a second connection for a request sent
 * right after the previous body ended, before that connection was marked free.)
 */
export class OriginConnections {
  private readonly entries = new Map<string, Entry>();
  private lastSweepMs = 0;
  private readonly maxOrigins: number;
  private readonly idleCloseMs: number;

  constructor(limits: OriginConnectionLimits = {}) {
    this.maxOrigins = limits.maxOrigins ?? MAX_ORIGINS;
    this.idleCloseMs = limits.idleCloseMs ?? IDLE_CLOSE_MS;
  }

  /**
   * A connection for this checked target: a kept one when the same origin resolved to the same
   * addresses, unless `fresh` asks for a new one.
   */
  lease(target: CheckedTarget, connectTimeoutMs: number, options: { fresh?: boolean } = {}): Lease {
    const now = Date.now();
    const key = keyOf(target, connectTimeoutMs);
    let entry = this.entries.get(key);
    if (entry) {
      // Re-inserted, so the map's order stays least recently used first.
      this.entries.delete(key);
    } else {
      this.sweep(now);
      entry = { idle: [], lastUsedMs: now, closed: false, keep: true };
    }
    entry.lastUsedMs = now;
    this.entries.set(key, entry);
    let client = options.fresh || !entry.keep ? undefined : entry.idle.pop();
    while (client && (client.closed || client.destroyed)) client = entry.idle.pop();
    const reused = client !== undefined;
    client ??= new Client(target.url.origin, {
      connect: pinnedConnectOptions(target, connectTimeoutMs),
      pipelining: 1,
      keepAliveTimeout: KEEP_ALIVE_MS,
    });
    const owner = entry;
    const lent = client;
    let released = false;
    return {
      client: lent,
      reused,
      release: (reusable) => {
        if (released) return;
        released = true;
        if (reusable && owner.keep && !owner.closed && !lent.closed && !lent.destroyed) owner.idle.push(lent);
        else lent.destroy().catch(() => {});
      },
    };
  }

  /**
   * This origin's kept connections are closed and none is kept any more (until it goes idle and is
   * forgotten): a server that drops reused connections gets one connection per request, as before.
   */
  stopKeeping(target: CheckedTarget, connectTimeoutMs: number): void {
    const entry = this.entries.get(keyOf(target, connectTimeoutMs));
    if (!entry) return;
    entry.keep = false;
    for (const client of entry.idle.splice(0)) client.destroy().catch(() => {});
  }

  /** How many origins have connections kept now (for tests and metrics). */
  get size(): number {
    return this.entries.size;
  }

  /** Closes every kept connection; connections lent out now close when they are given back. */
  async close(): Promise<void> {
    const entries = [...this.entries.values()];
    this.entries.clear();
    await Promise.all(entries.map((entry) => closeEntry(entry)));
  }

  private sweep(now: number): void {
    if (now - this.lastSweepMs < 1_000 && this.entries.size < this.maxOrigins) return;
    this.lastSweepMs = now;
    for (const [key, entry] of this.entries) {
      const idle = now - entry.lastUsedMs >= this.idleCloseMs;
      if (!idle && this.entries.size < this.maxOrigins) break;
      this.entries.delete(key);
      closeEntry(entry).catch(() => {});
    }
  }
}

async function closeEntry(entry: Entry): Promise<void> {
  entry.closed = true;
  const clients = entry.idle.splice(0);
  await Promise.all(clients.map((client) => client.close().catch(() => {})));
}

function keyOf(target: CheckedTarget, connectTimeoutMs: number): string {
  const addresses = target.addresses.map((a) => a.address).join(',');
  return `${target.url.origin} ${addresses} ${connectTimeoutMs}`;
}

/** The fetch path's connections, shared by every request of this process. */
export const originConnections = new OriginConnections();

/** Closes the fetch path's kept connections (a worker's shutdown). */
export function closeOriginConnections(): Promise<void> {
  return originConnections.close();
}
