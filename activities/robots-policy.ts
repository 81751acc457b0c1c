/**
 * robots.txt for one origin: fetched once, cached in Postgres for up to 24 hours (RFC 9309
 * §2.4) and in memory, and consulted before every page request. Status rules (§2.3.1): 2xx is
 * parsed, whatever its Content-Type; 4xx (and too many redirects, a stray 304 or an undecodable
 * body) means allow all; 5xx, 429, network errors and refusals mean disallow all — the origin is
 * not crawled.
 */
import type { Database } from '../db/database';
import {
  allowAll,
  crawlDelaySeconds,
  disallowAll,
  evaluate,
  parseRobots,
  ROBOTS_MAX_BYTES,
  type RobotsFile,
  type RobotsVerdict,
  sitemaps,
} from '../domain/robots';
import { fetchPage } from './http/fetch-page';
import type { FetchPageResult } from './http/fetch-result';
import type { Resolver } from './http/ssrf-guard';
import { abortableSleep, offClockRequests, type Sleep } from './politeness-wait';

const CACHE_TTL_MS = 24 * 60 * 60 * 1000;

/** How robots.txt is requested, by the crawler and by `gleaner robots` alike. */
export const ROBOTS_FETCH = {
  allowedContentTypes: ['*/*'],
  // RFC 9309 §2.5: a longer file is parsed as far as the first 500 KiB, never refused for size.
  maxBodyBytes: ROBOTS_MAX_BYTES,
  truncateBody: true,
  // §2.3.1.2: at least five redirects are followed.
  maxRedirects: 5,
} as const;

export type RobotsSource = 'fetched' | 'unavailable-allow-all' | 'unreachable-disallow-all';

export interface RobotsRecord {
  origin: string;
  source: RobotsSource;
  rules: RobotsFile;
  httpStatus?: number;
  /** Why robots.txt could not be used, in words for the user. */
  error?: string;
  fetchedAtMs: number;
}

export interface RobotsFetchOptions {
  userAgent: string;
  allowHosts: readonly string[];
  signal?: AbortSignal;
  /**
   * The crawl's gap: a robots.txt fetch waits it out after this process's last off-clock request to
   * the origin (activities/politeness-wait.ts `offClockRequests`). @default 0
   */
  gapMs?: number;
  /** How that wait sleeps (an activity's `Context.sleep`). @default a timer that honours `signal` */
  sleep?: Sleep;
}

/** What a transient failure should do: retry the activity, or settle as disallow-all. */
export class RobotsTransientError extends Error {
  override readonly name = 'RobotsTransientError';
}

export function createRobotsPolicy({ db, resolve }: { db: Database; resolve?: Resolver }) {
  const memory = new Map<string, RobotsRecord>();

  async function cached(origin: string): Promise<RobotsRecord | undefined> {
    const inMemory = memory.get(origin);
    if (inMemory && Date.now() - inMemory.fetchedAtMs < CACHE_TTL_MS) return inMemory;
    const { rows } = await db.query<{
      source: RobotsSource;
      rules: RobotsFile;
      http_status: number | null;
      fetched_ms: number;
    }>(
      `SELECT source, rules, http_status, (extract(epoch FROM fetched_at) * 1000)::float8 AS fetched_ms
       FROM robots WHERE origin = $1 AND fetched_at > now() - interval '24 hours'`,
      [origin],
    );
    const row = rows[0];
    if (!row) return undefined;
    const record: RobotsRecord = {
      origin,
      source: row.source,
      rules: row.rules,
      ...(row.http_status === null ? {} : { httpStatus: row.http_status }),
      fetchedAtMs: Number(row.fetched_ms),
    };
    memory.set(origin, record);
    return record;
  }

  /**
   * The origin's robots record, fetched when no fresh one is cached. `finalAttempt` decides
   * whether an unreachable robots.txt throws (so Temporal retries) or settles as disallow-all.
   */
  async function load(
    origin: string,
    options: RobotsFetchOptions,
    finalAttempt: boolean,
  ): Promise<RobotsRecord> {
    const hit = await cached(origin);
    if (hit) return hit;
    // Outside the origin's own clock (any activity may be first to need it): it keeps the gap from
    // the last such request and counts as one for the next.
    await offClockRequests.wait(origin, options.gapMs ?? 0, options.sleep ?? abortableSleep(options.signal));
    let fetched: Awaited<ReturnType<typeof fetchPage>>;
    try {
      fetched = await fetchPage(`${origin}/robots.txt`, {
        userAgent: options.userAgent,
        allowHosts: options.allowHosts,
        ...ROBOTS_FETCH,
        ...(resolve ? { resolve } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } finally {
      offClockRequests.ended(origin);
    }
    const record = interpretRobots(origin, fetched);
    if (record.source === 'unreachable-disallow-all') {
      // Network failures are retried by Temporal here; a 5xx settles now and the workflow backs off.
      if (!finalAttempt && fetched.kind === 'network-error') throw new RobotsTransientError(record.error);
      // Not cached: the next look (after the workflow's backoff) asks the server again.
      return record;
    }
    await db.query(
      `INSERT INTO robots (origin, fetched_at, http_status, source, rules, error) VALUES ($1, now(), $2, $3, $4, $5)
       ON CONFLICT (origin) DO UPDATE SET fetched_at = now(), http_status = EXCLUDED.http_status,
         source = EXCLUDED.source, rules = EXCLUDED.rules, error = EXCLUDED.error`,
      [origin, record.httpStatus ?? null, record.source, JSON.stringify(record.rules), record.error ?? null],
    );
    memory.set(origin, record);
    return record;
  }

  return {
    load,
    /**
     * The verdict from a robots.txt this process holds in memory (fresh), or undefined: for checks
     * too many to pay a query each (every link of a page), where not knowing means asking later.
     */
    memoryVerdict(url: string, origin: string, userAgent: string): RobotsVerdict | undefined {
      const record = memory.get(origin);
      return record && Date.now() - record.fetchedAtMs < CACHE_TTL_MS
        ? evaluate(record.rules, url, userAgent)
        : undefined;
    },
    /** The verdict from a fresh cached robots.txt, or undefined when one would have to be fetched. */
    async cachedVerdict(url: string, origin: string, userAgent: string): Promise<RobotsVerdict | undefined> {
      const record = await cached(origin);
      return record ? evaluate(record.rules, url, userAgent) : undefined;
    },
    /** Whether the crawler may request `url`; loads the origin's robots.txt if needed. */
    async check(url: string, origin: string, options: RobotsFetchOptions): Promise<RobotsVerdict> {
      const record = await load(origin, options, true);
      return evaluate(record.rules, url, options.userAgent);
    },
    crawlDelayMs(record: RobotsRecord, userAgent: string): number | undefined {
      const seconds = crawlDelaySeconds(record.rules, userAgent);
      return seconds === undefined ? undefined : Math.round(seconds * 1000);
    },
    sitemaps(record: RobotsRecord): string[] {
      return sitemaps(record.rules);
    },
  };
}

export type RobotsPolicy = ReturnType<typeof createRobotsPolicy>;

/**
 * RFC 9309 §2.3.1 applied to one fetch of robots.txt. `gleaner robots` reads its answers through
 * this too, so it reports what a crawl would do.
 */
export function interpretRobots(origin: string, fetched: FetchPageResult): RobotsRecord {
  const base = {
    origin,
    fetchedAtMs: Date.now(),
    ...(fetched.status === undefined ? {} : { httpStatus: fetched.status }),
  };
  switch (fetched.kind) {
    case 'ok':
      return { ...base, source: 'fetched', rules: parseRobots(fetched.text, { maxBytes: ROBOTS_MAX_BYTES }) };
    // Neither has rules to read; like a 4xx, the file is unavailable (§2.3.1.3). We never send a
    // conditional request for robots.txt, so a 304 is the server's mistake.
    case 'not-modified':
      return {
        ...base,
        source: 'unavailable-allow-all',
        rules: allowAll(),
        error: 'robots.txt answered 304 Not Modified to a request that was not conditional',
      };
    case 'unsupported-content-type':
      return {
        ...base,
        source: 'unavailable-allow-all',
        rules: allowAll(),
        error: fetched.contentEncoding
          ? `robots.txt sent in an unsupported content-encoding (${fetched.contentEncoding})`
          : `robots.txt sent as ${fetched.contentType ?? 'an unreadable type'}`,
      };
    case 'redirect-limit':
      return {
        ...base,
        source: 'unavailable-allow-all',
        rules: allowAll(),
        error: 'robots.txt: too many redirects',
      };
    case 'http-error':
      if (fetched.status >= 400 && fetched.status < 500 && fetched.status !== 429) {
        return { ...base, source: 'unavailable-allow-all', rules: allowAll() };
      }
      return unreachable(base, `robots.txt answered HTTP ${fetched.status}`);
    case 'too-large':
      return unreachable(base, `robots.txt is larger than ${fetched.limitBytes} bytes`);
    case 'blocked':
      return unreachable(
        base,
        `robots.txt blocked by the SSRF guard: ${fetched.message} (allow it with --allow-host)`,
      );
    case 'network-error':
      return unreachable(
        base,
        `robots.txt unreachable: ${fetched.timeout ? `${fetched.timeout} timeout` : fetched.code}: ${fetched.message}`,
      );
  }
}

function unreachable(base: Omit<RobotsRecord, 'source' | 'rules'>, error: string): RobotsRecord {
  return { ...base, source: 'unreachable-disallow-all', rules: disallowAll(), error };
}
