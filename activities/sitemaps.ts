/**
 * Sitemap bootstrap for one origin: reads the `Sitemap:` lines of its robots.txt, the caller's
 * extra sitemap URLs and `<origin>/sitemap.xml`, follows sitemap indexes breadth-first, and claims
 * the page URLs it finds into `crawl_urls` (depth 1, `discovered_from = 'sitemap:<file>'`,
 * with `priority` and `lastmod`), in batches. The result carries counts only: the URLs stay in
 * Postgres, and the origin workflow pages through them with `nextClaimedUrls`, so a 50,000-URL
 * sitemap never enters workflow history.
 *
 * Bounds: each file at most 50 MB on the wire and 50 MB after gunzip (streamed, so a gzip bomb is
 * cut at the limit), 50,000 entries per file, `maxSitemaps` files and `maxUrlsPerOrigin` claims.
 * Requests go out one at a time, robots.txt checked first, `delayMs` from each response's end to
 * the next request (`politeness-wait.ts`).
 */
import { createGunzip } from 'node:zlib';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Database } from '../db/database';
import { CONTENT_TYPES } from '../domain/crawl-spec';
import { isCrawlable } from '../domain/crawlable';
import { DEFAULT_DELAY_MS } from '../domain/politeness/gap';
import {
  createSitemapParser,
  looksLikeXml,
  parseTextSitemap,
  SITEMAP_MAX_BYTES,
  SITEMAP_MAX_ENTRIES,
  type SitemapEntry,
} from '../domain/sitemap';
import { canonicalizeUrl, originOf } from '../domain/url';
import { checkPageLimit, keysetPage } from './claim-paging';
import { describeFailure } from './fetch-and-store';
import { withHeartbeat } from './heartbeat';
import { fetchPage } from './http/fetch-page';
import type { FetchOk } from './http/fetch-result';
import { abortableSleep, RequestSpacing } from './politeness-wait';
import { createRobotsPolicy, type RobotsPolicy } from './robots-policy';
import { loadCrawlScope } from './scope-cache';
import type {
  IngestSitemapsInput,
  IngestSitemapsResult,
  NextClaimedUrlsInput,
  NextClaimedUrlsResult,
} from './types';

export const SITEMAP_CONTENT_TYPES: readonly string[] = [
  'application/xml',
  'text/xml',
  'text/plain',
  'application/gzip',
  'application/x-gzip',
  'application/octet-stream',
];

/**
 * A sitemap the site names (robots.txt, an index, the crawl's input) is also read under `text/html`
 * or no type at all: sitemaps made by scripts (a `sitemap.php`, a CMS plugin) often go out under the
 * script's default type, or none, and were refused. What the body is, XML or a text list, is told from
 * its first bytes (`parseBody`); an HTML page read as one yields no URL. The guessed `/sitemap.xml`
 * keeps to the sitemap types: there, HTML is most often the site's not-found page answering 200.
 */
function acceptSitemap(guessed: boolean): (mediaType: string | undefined) => boolean {
  return (mediaType) =>
    mediaType === undefined
      ? !guessed
      : SITEMAP_CONTENT_TYPES.includes(mediaType) || (!guessed && mediaType === 'text/html');
}
const DEFAULT_MAX_SITEMAPS = 50;
const DEFAULT_MAX_URLS_PER_ORIGIN = 50_000;
const CLAIM_BATCH = 1000;
const MAX_ERRORS = 5;
const TEXT_CHUNK_CHARS = 64 * 1024;

/**
 * The frontier order of sitemap claims, all ascending so one btree serves it and keyset paging is
 * a row comparison: priority high to low (absent last), then lastmod new to old (absent last),
 * then url. Must match the index expressions in db/migrations/003_sitemaps.sql exactly.
 */
const PRIORITY_KEY = '(-COALESCE(priority, -1))';
const LASTMOD_KEY =
  "('3000-01-01T00:00:00Z'::timestamptz - COALESCE(lastmod, '1000-01-01T00:00:00Z'::timestamptz))";

export interface SitemapDeps {
  db: Database;
  /** Shared with the fetch activities so robots.txt is cached once per process. @default a new policy */
  robots?: RobotsPolicy;
}

/** What the core needs from its host: Temporal's heartbeat and cancellation, or a test's stand-ins. */
export interface IngestHooks {
  heartbeat(details?: unknown): void;
  signal?: AbortSignal;
}

export function createSitemapActivities({ db, robots }: SitemapDeps) {
  const policy = robots ?? createRobotsPolicy({ db });
  return {
    async ingestSitemaps(input: IngestSitemapsInput): Promise<IngestSitemapsResult> {
      const context = Context.current();
      return ingestSitemapsCore({ db, robots: policy }, input, {
        heartbeat: (details) => context.heartbeat(details),
        signal: context.cancellationSignal,
      });
    },
    async nextClaimedUrls(input: NextClaimedUrlsInput): Promise<NextClaimedUrlsResult> {
      return nextClaimedUrlsCore(db, input);
    },
  };
}

interface QueuedSitemap {
  url: string;
  /** `<origin>/sitemap.xml` tried on spec: its 404 or wrong type is not an error. */
  guessed: boolean;
}

interface Candidate {
  url: string;
  priority: number | null;
  lastmod: string | null;
}

/** The I/O core of `ingestSitemaps`, callable without a Temporal activity context. */
export async function ingestSitemapsCore(
  deps: { db: Database; robots: RobotsPolicy },
  input: IngestSitemapsInput,
  hooks: IngestHooks,
): Promise<IngestSitemapsResult> {
  const limits = validate(input);
  const { spec } = input;
  const origin = originOf(input.origin);
  // Widened by seed redirects, or a moved origin's sitemap would list nothing in scope.
  const inScope = await loadCrawlScope(deps.db, input.crawlId, spec);
  const result: IngestSitemapsResult = {
    sitemapsFetched: 0,
    urlsSeen: 0,
    urlsClaimed: 0,
    claimedTotal: 0,
    truncated: false,
    errors: [],
  };
  // Sitemap URLs are depth 1: a crawl limited to its seeds takes none.
  if (spec.maxDepth < 1) return result;

  const fetchOptions = {
    userAgent: spec.userAgent,
    allowHosts: spec.allowHosts,
    ...(hooks.signal ? { signal: hooks.signal } : {}),
  };
  const fail = (message: string) => {
    if (result.errors.length < MAX_ERRORS) result.errors.push(message);
  };
  const robotsRecord = await deps.robots.load(origin, fetchOptions, true);
  const queue: QueuedSitemap[] = [];
  const queued = new Set<string>();
  const enqueue = (raw: string, base: string | undefined, guessed: boolean): void => {
    const url = canonicalizeUrl(raw, base);
    if (url === null) {
      fail(`sitemap ${JSON.stringify(raw.slice(0, 200))} is not a valid URL`);
      return;
    }
    if (queued.has(url)) return;
    if (originOf(url) !== origin && !inScope(url)) {
      fail(`sitemap ${url} is off-origin and out of scope`);
      return;
    }
    if (queued.size >= limits.maxSitemaps) {
      result.truncated = true;
      return;
    }
    queued.add(url);
    queue.push({ url, guessed });
  };
  for (const url of deps.robots.sitemaps(robotsRecord)) enqueue(url, origin, false);
  for (const url of input.sitemapUrls ?? []) enqueue(url, origin, false);
  enqueue(`${origin}/sitemap.xml`, undefined, true);

  const accepted = new Set<string>();
  const progress = () => ({ sitemapsFetched: result.sitemapsFetched, urlsClaimed: result.urlsClaimed });
  // One request at a time, the gap from each response's end to the next request; the first waits
  // nothing: the origin workflow waited the gap before it started this activity.
  const spacing = new RequestSpacing(abortableSleep(hooks.signal));
  // A beat up front too: a retry reads how far an earlier attempt got.
  hooks.heartbeat(progress());
  await withHeartbeat(
    async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const sitemap = next;
        const verdict = await deps.robots.check(sitemap.url, originOf(sitemap.url), fetchOptions);
        if (!verdict.allowed) {
          if (!sitemap.guessed) fail(`sitemap ${sitemap.url} is disallowed by robots.txt`);
          continue;
        }
        // Every sitemap request counts against the activity's origin, wherever the sitemap lives.
        await spacing.wait(origin, limits.delayMs);
        const fetched = await fetchPage(sitemap.url, {
          ...fetchOptions,
          acceptResponse: acceptSitemap(sitemap.guessed),
          maxBodyBytes: SITEMAP_MAX_BYTES,
          maxRedirects: spec.maxRedirects,
        }).finally(() => spacing.ended(origin));
        const outcome = fetched.kind === 'ok' ? undefined : describeFailure(fetched);
        await deps.db.query(
          `INSERT INTO fetches (crawl_id, url, final_url, outcome, status, bytes, total_ms, error, started_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, to_timestamp($9 / 1000.0))`,
          [
            input.crawlId,
            sitemap.url,
            fetched.finalUrl,
            `sitemap-${fetched.kind}`,
            fetched.status ?? null,
            fetched.bytes,
            Math.round(fetched.timings.totalMs),
            outcome ?? null,
            fetched.timings.startedAtMs,
          ],
        );
        if (fetched.kind !== 'ok') {
          const missing =
            (fetched.kind === 'http-error' && (fetched.status === 404 || fetched.status === 410)) ||
            fetched.kind === 'unsupported-content-type';
          if (!(sitemap.guessed && missing)) fail(`sitemap ${sitemap.url}: ${outcome}`);
          continue;
        }
        result.sitemapsFetched++;

        let pending: Candidate[] = [];
        const flush = async () => {
          if (pending.length === 0) return;
          const batch = pending;
          pending = [];
          result.urlsClaimed += await claim(deps.db, input.crawlId, origin, sitemap.url, batch);
          hooks.heartbeat(progress());
        };
        const onUrl = (entry: SitemapEntry): boolean => {
          result.urlsSeen++;
          const url = canonicalizeUrl(entry.loc, sitemap.url);
          if (url === null || accepted.has(url) || originOf(url) !== origin) return true;
          if (!isCrawlable(url, inScope, spec.contentTypes ?? CONTENT_TYPES)) return true;
          if (accepted.size >= limits.maxUrlsPerOrigin) {
            result.truncated = true;
            return false;
          }
          accepted.add(url);
          pending.push({ url, priority: entry.priority ?? null, lastmod: entry.lastmod ?? null });
          return true;
        };
        const onEntry = (entry: SitemapEntry): boolean => {
          if (entry.kind === 'sitemap') {
            enqueue(entry.loc, sitemap.url, false);
            return true;
          }
          return onUrl(entry);
        };

        const problem = await parseBody(fetched, onEntry, async () => {
          if (pending.length >= CLAIM_BATCH) await flush();
        });
        await flush();
        if (problem.truncated) result.truncated = true;
        if (problem.error) fail(`sitemap ${sitemap.url}: ${problem.error}`);
        if (accepted.size >= limits.maxUrlsPerOrigin && queue.length > 0) {
          result.truncated = true;
          break;
        }
      }
    },
    { intervalMs: 2_000, heartbeat: hooks.heartbeat, details: progress },
  );
  const total = await deps.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM crawl_urls WHERE crawl_id = $1 AND origin = $2 AND source = 'sitemap'`,
    [input.crawlId, origin],
  );
  result.claimedTotal = total.rows[0]?.n ?? 0;
  return result;
}

function validate(input: IngestSitemapsInput): {
  maxSitemaps: number;
  maxUrlsPerOrigin: number;
  delayMs: number;
} {
  const problems: string[] = [];
  if (typeof input.crawlId !== 'string' || input.crawlId === '') problems.push('crawlId is required');
  if (typeof input.origin !== 'string' || canonicalizeUrl(input.origin) === null)
    problems.push(`origin ${JSON.stringify(input.origin)} is not an http(s) origin`);
  const limits = {
    maxSitemaps: input.maxSitemaps ?? DEFAULT_MAX_SITEMAPS,
    maxUrlsPerOrigin: input.maxUrlsPerOrigin ?? DEFAULT_MAX_URLS_PER_ORIGIN,
    delayMs: input.delayMs ?? DEFAULT_DELAY_MS,
  };
  if (!Number.isSafeInteger(limits.maxSitemaps) || limits.maxSitemaps < 1 || limits.maxSitemaps > 1000)
    problems.push('maxSitemaps must be an integer from 1 to 1000');
  if (!Number.isSafeInteger(limits.maxUrlsPerOrigin) || limits.maxUrlsPerOrigin < 1)
    problems.push('maxUrlsPerOrigin must be a positive integer');
  if (!Number.isSafeInteger(limits.delayMs) || limits.delayMs < 0 || limits.delayMs > 60_000)
    problems.push('delayMs must be an integer from 0 to 60000');
  if (input.sitemapUrls !== undefined && !Array.isArray(input.sitemapUrls))
    problems.push('sitemapUrls must be a list of URLs');
  if (problems.length > 0)
    throw ApplicationFailure.nonRetryable(
      `invalid sitemap input: ${problems.join('; ')}`,
      'InvalidSitemapInput',
    );
  return limits;
}

/**
 * Streams one fetched sitemap through the parser: gunzipped on the fly when the body is still
 * gzip (a `.gz` file served as application/gzip), cut at 50 MB of output. `afterChunk` runs
 * between chunks so claims are written in batches while parsing goes on.
 */
async function parseBody(
  fetched: FetchOk,
  onEntry: (entry: SitemapEntry) => boolean,
  afterChunk: () => Promise<void>,
): Promise<{ truncated: boolean; error?: string }> {
  const gzipped = fetched.body.length >= 2 && fetched.body[0] === 0x1f && fetched.body[1] === 0x8b;
  const chunks = gzipped ? gunzipText(fetched.body) : textChunks(fetched.text);
  let parser: ReturnType<typeof createSitemapParser> | undefined;
  let text: string[] | undefined;
  let error: string | undefined;
  try {
    for await (const chunk of chunks) {
      if (!parser && !text) {
        if (looksLikeXml(chunk)) parser = createSitemapParser(onEntry, { maxUrls: SITEMAP_MAX_ENTRIES });
        else text = [];
      }
      if (parser) {
        parser.write(chunk);
        await afterChunk();
      } else text?.push(chunk);
    }
  } catch (thrown) {
    error = (thrown as Error).message;
  }
  let truncated = error !== undefined;
  if (parser) truncated = parser.end().truncated || truncated;
  if (text) {
    const parsed = parseTextSitemap(text.join(''), { maxUrls: SITEMAP_MAX_ENTRIES });
    text = undefined;
    for (const loc of parsed.urls) {
      if (!onEntry({ kind: 'url', loc })) {
        truncated = true;
        break;
      }
      await afterChunk();
    }
    truncated = parsed.truncated || truncated;
  }
  return error === undefined ? { truncated } : { truncated, error };
}

async function* textChunks(text: string): AsyncGenerator<string> {
  for (let start = 0; start < text.length; start += TEXT_CHUNK_CHARS) {
    yield text.slice(start, start + TEXT_CHUNK_CHARS);
  }
}

/** Gunzips as a stream and decodes UTF-8 (the protocol's only encoding), stopping at 50 MB of output. */
async function* gunzipText(body: Buffer): AsyncGenerator<string> {
  const gunzip = createGunzip();
  gunzip.end(body);
  const decoder = new TextDecoder('utf-8');
  let bytes = 0;
  try {
    for await (const piece of gunzip as AsyncIterable<Buffer>) {
      bytes += piece.length;
      if (bytes > SITEMAP_MAX_BYTES) {
        throw new Error(`larger than ${SITEMAP_MAX_BYTES} bytes after gunzip; cut there`);
      }
      yield decoder.decode(piece, { stream: true });
    }
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code?.startsWith('Z_')) throw new Error(`not valid gzip (${code}); read up to the damage`);
    throw error;
  } finally {
    gunzip.destroy();
  }
  const rest = decoder.decode();
  if (rest) yield rest;
}

/** Claims one batch; returns how many were new. Existing claims (any source) are left alone. */
async function claim(
  db: Database,
  crawlId: string,
  origin: string,
  sitemapUrl: string,
  batch: Candidate[],
): Promise<number> {
  const inserted = await db.query(
    `INSERT INTO crawl_urls (crawl_id, url, origin, depth, discovered_from, priority, lastmod, source)
     SELECT $1::text, u.url, $2::text, 1, $3::text, u.priority, u.lastmod, 'sitemap'
     FROM unnest($4::text[], $5::real[], $6::timestamptz[]) AS u(url, priority, lastmod)
     ON CONFLICT (crawl_id, url) DO NOTHING`,
    [
      crawlId,
      origin,
      `sitemap:${sitemapUrl}`,
      batch.map((c) => c.url),
      batch.map((c) => c.priority),
      batch.map((c) => c.lastmod),
    ],
  );
  return inserted.rowCount;
}

/**
 * One page of an origin's sitemap claims in frontier order (priority, then lastmod, then url),
 * after `afterUrl`. The cursor is a URL: its row's sort key is looked up, and the key never changes
 * because claims are never updated, so paging is stable while new claims arrive.
 */
export async function nextClaimedUrlsCore(
  db: Database,
  input: NextClaimedUrlsInput,
): Promise<NextClaimedUrlsResult> {
  if (input.source !== 'sitemap')
    throw ApplicationFailure.nonRetryable(
      `unknown claim source ${JSON.stringify(input.source)}`,
      'InvalidInput',
    );
  checkPageLimit(input.limit);
  const origin = originOf(input.origin);
  const key = `${PRIORITY_KEY}, ${LASTMOD_KEY}, url`;
  const { rows } = await db.query<{ url: string; depth: number }>(
    `SELECT url, depth FROM crawl_urls
     WHERE crawl_id = $1 AND origin = $2 AND source = 'sitemap'
       AND ($3::text IS NULL OR (${key}) > (SELECT ${key} FROM crawl_urls WHERE crawl_id = $1 AND url = $3))
     ORDER BY ${key}
     LIMIT $4`,
    [input.crawlId, origin, input.afterUrl ?? null, input.limit],
  );
  if (rows.length === 0 && input.afterUrl !== undefined) {
    const known = await db.query('SELECT 1 FROM crawl_urls WHERE crawl_id = $1 AND url = $2', [
      input.crawlId,
      input.afterUrl,
    ]);
    if (known.rows.length === 0)
      throw ApplicationFailure.nonRetryable(`cursor ${input.afterUrl} is not a claimed URL`, 'InvalidInput');
  }
  return keysetPage(
    rows.map((row) => ({ url: row.url, depth: row.depth })),
    input.limit,
  );
}
