/**
 * The fetch activity: one HTTP attempt for one claimed URL, then — in one short transaction —
 * the page row, its outgoing edges, and the claims of the URLs it was first to discover.
 * Temporal owns retries: a transient failure is thrown as a retryable ApplicationFailure.
 * The activity's retry policy is long so a database outage never loses a page; how often one
 * URL's *HTTP* failures are retried is bounded here instead, by the attempt number.
 */

import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Database, Queryable } from '../db/database';
import { CONTENT_TYPES } from '../domain/crawl-spec';
import { isCrawlable, isLeftAlone } from '../domain/crawlable';
import { normalizeLanguageTag } from '../domain/languages';
import type { ExtractedLink, LinkExtraction } from '../domain/links';
import { originGapMs } from '../domain/politeness/gap';
import { detectRedirectStub, type RedirectStub } from '../domain/redirect-stub';
import type { FetchTier } from '../domain/render-decision';
import { parseXRobotsTag, type RobotsVerdict } from '../domain/robots';
import type { ScopePredicate } from '../domain/scope';
import { canonicalizeUrl, originOf } from '../domain/url';
import type { DocumentType } from '../extract/documents/types';
import { observeFetch } from '../infra/metrics';
import type { FetchedDocument } from './fetched-document';
import type { FetchedHtml } from './fetched-html';
import { type OwnedClaim, spillBeyondRoom } from './frontier-spill';
import { withHeartbeat } from './heartbeat';
import { acceptResponseFor, admitResponseKind, responseKindOf } from './http/fetch-options';
import { fetchPage } from './http/fetch-page';
import type { FetchPageResult } from './http/fetch-result';
import {
  type PageTaskOptions,
  readFetchedDocumentInThread,
  readFetchedHtmlInThread,
} from './page-analysis-pool';
import { handoffLatenessMs, offClockRequests, RequestSpacing, waitForHandoff } from './politeness-wait';
import { PROCESS_CLOCK_ID, processClockMs } from './process-clock';
import {
  conditionalHeaders,
  loadKnownPage,
  trackGone,
  trackStoredVisit,
  trackUnstored,
} from './recrawl-visits';
import type { RobotsPolicy } from './robots-policy';
import { createScopeCache, type ScopeCache } from './scope-cache';
import { ThreadDeadlineError } from './thread-deadline';
import { admitLink } from './trap-budgets';
import type { DiscoveredUrl, FetchAndStoreInput, FetchAndStoreResult } from './types';

const gzipAsync = promisify(gzip);

/** A fetch beats every 2 s: its heartbeat timeout (10 s) is short, so a lost worker is noticed soon. */
const HEARTBEAT = { intervalMs: 2_000 };
/** Attempts at one URL when the server or the network fails (refused, timeout, 429, 5xx). */
export const HTTP_ATTEMPTS = 3;

export interface FetchAndStoreDeps {
  db: Database;
  robots: RobotsPolicy;
  /** Longest the page's HTML work (links, render heuristics) may run. @default pageDeadlineMs() */
  deadlineMs?: number;
}

/** Most a fetch waits in all between redirect hops to its own origin: half its 2-minute timeout. */
const MAX_HOP_WAIT_MS = 60_000;

export function createFetchAndStore({ db, robots, deadlineMs }: FetchAndStoreDeps) {
  const scopes = createScopeCache(db);

  return async function fetchAndStore(input: FetchAndStoreInput): Promise<FetchAndStoreResult> {
    const context = Context.current();
    const startedAtMs = processClockMs();
    const firstAttempt = context.info.attempt === 1;
    let lateMs: number | undefined;
    const waitForGap = (pacing: NonNullable<FetchAndStoreInput['pacing']>) => {
      lateMs = handoffLatenessMs(pacing, { firstAttempt });
      return waitForHandoff(pacing, { startedAtMs, firstAttempt }, (ms) => context.sleep(ms));
    };
    // No heartbeat up front (withHeartbeat): most fetches end well inside one interval, so each
    // skipped beat is one server write less per page.
    return withHeartbeat(async () => {
      const origin = originOf(input.url);
      // With robots.txt cached, the verdict and the stored page are read before the politeness wait,
      // so the request leaves as the gap ends (reading them after cost ~25 ms a lap on a busy loop).
      // An expired cache makes the check itself ask the origin for robots.txt: that waits first.
      const sleep = (ms: number) => context.sleep(ms);
      const robotsOptions = {
        userAgent: input.spec.userAgent,
        allowHosts: input.spec.allowHosts,
        signal: context.cancellationSignal,
        gapMs: originGapMs(input.spec.delayMs, undefined),
        sleep,
      };
      let pacedMs: number | undefined;
      let verdict = await robots.cachedVerdict(input.url, origin, input.spec.userAgent);
      if (!verdict) {
        pacedMs = input.pacing ? await waitForGap(input.pacing) : undefined;
        verdict = await robots.check(input.url, origin, robotsOptions);
      }
      if (!verdict.allowed) return await robotsBlocked(db, input, verdict);
      // A known page is asked conditionally: an unchanged one answers 304 and costs nothing more.
      const known = await loadKnownPage(db, input.url);
      if (pacedMs === undefined && input.pacing) pacedMs = await waitForGap(input.pacing);
      // Each redirect hop is a request to a URL of its own, so its origin's robots.txt rules it too
      // (RFC 9309 §2.2.2 leaves redirects to the crawler; following into a disallowed path is not polite).
      let refusedHop: { url: string; verdict: RobotsVerdict } | undefined;
      /** A hop refused for where it leads (a login wall), not for the wait it needed. */
      let leftAloneHop = false;
      // A hop to this origin is a request of its own, so it keeps the origin's gap from the end of the
      // redirect before it: sent at once, a chain put requests 3 ms apart under `Crawl-delay: 1`. A hop
      // to another origin is not paced here (that origin's workflow never sees it).
      const hops = new RequestSpacing((ms) => context.sleep(ms));
      // The origin's gap, read once a fetch and only if it redirects within the origin.
      let originGap: Promise<number> | undefined;
      /** An origin's gap: the crawl's delay raised by its Crawl-delay (its robots.txt is loaded by now). */
      const gapOf = async (of: string) => {
        const record = await robots.load(of, robotsOptions, true);
        return originGapMs(input.spec.delayMs, robots.crawlDelayMs(record, input.spec.userAgent));
      };
      const hopGapMs = async () => Math.max(input.pacing?.gapMs ?? 0, await gapOf(origin));
      let hopWaitedMs = 0;
      /** The origin of a hop to another origin while its request is out: it ends at the next hop or the response. */
      let offClockHop: string | undefined;
      const beforeRedirect = async (location: string): Promise<boolean> => {
        if (offClockHop) offClockRequests.ended(offClockHop);
        offClockHop = undefined;
        const hopOrigin = originOf(location);
        const sameOrigin = hopOrigin === origin;
        if (sameOrigin) hops.ended(origin);
        // A hop to where no link would be followed (a login wall's `/login?next=…` for every page
        // behind it, robots.txt, a trap) is not followed either: each page behind a login wall was
        // stored as one more copy of its form. A seed is the user's own choice and goes wherever it
        // redirects.
        if (input.depth > 0 && isLeftAlone(location)) {
          leftAloneHop = true;
          return false;
        }
        const hop = await robots.check(location, hopOrigin, robotsOptions);
        if (!hop.allowed) refusedHop = { url: location, verdict: hop };
        if (!hop.allowed) return false;
        // Another origin's clock never sees this request: it keeps that origin's gap from its last
        // off-clock request (its robots.txt, just fetched by the check above, or an earlier hop).
        if (sameOrigin) originGap ??= hopGapMs();
        const gapMs = sameOrigin && originGap ? await originGap : await gapOf(hopOrigin);
        const leftMs = sameOrigin ? hops.leftMs(origin, gapMs) : offClockRequests.leftMs(hopOrigin, gapMs);
        // Within the activity's time: a chain that would wait longer is not followed (a page then
        // fails as "redirect … not followed" rather than the activity timing out on every retry).
        if (hopWaitedMs + Math.max(0, leftMs) > MAX_HOP_WAIT_MS) return false;
        if (sameOrigin) hopWaitedMs += await hops.wait(origin, gapMs);
        else {
          hopWaitedMs += await offClockRequests.wait(hopOrigin, gapMs, sleep);
          offClockHop = hopOrigin;
        }
        return true;
      };
      // A hop from another origin's fetch may have reached this one just now.
      if (offClockRequests.leftMs(origin, originGapMs(input.spec.delayMs, undefined)) > 0)
        await offClockRequests.wait(origin, await gapOf(origin), sleep);
      // Inputs scheduled before `contentTypes` existed took HTML only; their spec has none and now
      // takes every type, as a new crawl's default does.
      const contentTypes = input.spec.contentTypes ?? CONTENT_TYPES;
      let response: FetchPageResult;
      try {
        response = await fetchPage(input.url, {
          acceptResponse: acceptResponseFor(contentTypes),
          userAgent: input.spec.userAgent,
          allowHosts: input.spec.allowHosts,
          maxBodyBytes: input.spec.maxBodyBytes,
          // As documented for --max-body-bytes: a longer page is cut there and kept, not skipped.
          truncateBody: true,
          maxRedirects: input.spec.maxRedirects,
          ...(input.spec.bodyTimeoutMs ? { bodyTimeoutMs: input.spec.bodyTimeoutMs } : {}),
          signal: context.cancellationSignal,
          beforeRedirect,
          ...conditionalHeaders(known),
        });
      } finally {
        // The last hop's response (or failure) to another origin ended with the fetch.
        if (offClockHop) offClockRequests.ended(offClockHop);
      }
      const fetched = admitResponseKind(response, contentTypes, input.spec.maxBodyBytes);
      const responseEnded = { clockId: PROCESS_CLOCK_ID, atMs: processClockMs() };
      observeFetch(fetched.timings.totalMs, fetched.kind);
      if (refusedHop) {
        const blocked = await robotsBlocked(db, input, refusedHop.verdict, refusedHop.url);
        return { ...blocked, msSinceResponse: msSince(fetched.timings), responseEnded };
      }
      await recordFetch(db, input, fetched);
      // A page can be visited twice in a crawl: through a redirect (an alias, a moved page's new URL)
      // and by its own URL. Which fetch reports its verdict is settled with the visit's record
      // (recrawl-visits.ts). With `assessRender` the render verdict comes back in the result, made in
      // the same thread pass as the links; none when that pass ran out of time (a page that hostile
      // is not worth a browser).
      const result =
        fetched.kind === 'ok'
          ? await store(db, input, fetched, await scopeOfPage(scopes, input, fetched.finalUrl), 'http', {
              assess: input.assessRender === true,
              robots,
              signal: context.cancellationSignal,
              ...(deadlineMs ? { deadlineMs } : {}),
              // A known page that redirects reports its own verdict (moved, below), not its target's.
              ...(known && fetched.redirects.length > 0 ? { reportsAskedPage: true } : {}),
            })
          : await trackUnstored(db, input.crawlId, known, failed(fetched, context.info.attempt));
      // A known page that now redirects elsewhere no longer serves what its row holds: the target is
      // stored under its own URL above, and this page leaves search as a 404 would (it comes back when
      // it answers 200 again). Left alone, its old text stayed searchable for good. One already
      // gone is visited again, unchanged.
      const moved =
        fetched.kind === 'ok' &&
        fetched.redirectStatus !== undefined &&
        known !== undefined &&
        result.finalUrl !== input.url &&
        result.pageId !== known.id
          ? await trackGone(db, input.crawlId, known, fetched.redirectStatus)
          : fetched.kind === 'redirect-limit' && known && (fetched.reason !== 'refused' || leftAloneHop)
            ? // Redirecting where the crawl goes no further (a login wall, a loop): gone all the same.
              await trackGone(db, input.crawlId, known, fetched.redirectStatus ?? 0, {
                reason: fetched.reason === 'refused' ? 'redirect-not-followed' : `redirect-${fetched.reason}`,
              })
            : undefined;
      // A duration on this machine's clock, so the workflow can date the response's end without
      // trusting that worker and server clocks agree.
      return {
        ...result,
        // The summary counts one verdict a fetch: the page asked for. Its target is counted when the
        // crawl visits it by its own URL (store() hands it back to be fetched when no one else will);
        // counting it here as well made every recrawl of a moved page report its target twice and the
        // move not at all.
        ...(moved ? { change: moved.change } : {}),
        msSinceResponse: msSince(fetched.timings),
        responseEnded,
        ...(pacedMs === undefined ? {} : { pacedMs: Math.round(pacedMs) }),
        ...(lateMs === undefined ? {} : { lateMs: Math.round(lateMs) }),
      };
    }, HEARTBEAT);
  };
}

/** The scope that judges the links of a page fetched for `input`, which landed on `finalUrl`. */
export function scopeOfPage(
  scopes: ScopeCache,
  input: { crawlId: string; spec: FetchAndStoreInput['spec']; url: string },
  finalUrl: string,
): Promise<ScopePredicate> {
  return scopes.forPage(input.crawlId, input.spec, input.url, canonicalizeUrl(finalUrl) ?? input.url);
}

/** Time since the last response of a fetch ended, on this machine's clock. */
function msSince(timings: FetchPageResult['timings']): number {
  return Math.max(0, Date.now() - (timings.startedAtMs + timings.totalMs));
}

export async function robotsBlocked(
  db: Database,
  input: FetchAndStoreInput,
  verdict: RobotsVerdict,
  /** The redirect target that robots.txt refused, when it was not `input.url` itself. */
  redirectedTo?: string,
): Promise<FetchAndStoreResult> {
  const rule = verdict.rule
    ? `${verdict.rule.directive}: ${verdict.rule.path} (line ${verdict.rule.line})`
    : 'no rule';
  const via = redirectedTo ? `redirected to ${redirectedTo}, which is ` : '';
  await db.query(
    `INSERT INTO fetches (crawl_id, url, final_url, outcome, bytes, error, started_at) VALUES ($1, $2, $3, 'robots-blocked', 0, $4, now())`,
    [
      input.crawlId,
      input.url,
      redirectedTo ?? null,
      `${via}disallowed by robots.txt for ${verdict.group ?? '*'}: ${rule}`,
    ],
  );
  return { outcome: 'robots-blocked', finalUrl: input.url, bytes: 0, linksStored: 0, discovered: [] };
}

async function recordFetch(db: Database, input: FetchAndStoreInput, fetched: FetchPageResult): Promise<void> {
  await db.query(
    `INSERT INTO fetches (crawl_id, url, final_url, outcome, status, bytes, ttfb_ms, total_ms, error, started_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, to_timestamp($10 / 1000.0))`,
    [
      input.crawlId,
      input.url,
      fetched.finalUrl,
      fetched.kind,
      fetched.status ?? null,
      fetched.bytes,
      fetched.timings.ttfbMs === undefined ? null : Math.round(fetched.timings.ttfbMs),
      Math.round(fetched.timings.totalMs),
      fetched.kind === 'ok'
        ? fetched.truncated
          ? `body cut at ${input.spec.maxBodyBytes} bytes`
          : null
        : describeFailure(fetched),
      fetched.timings.startedAtMs,
    ],
  );
}

/**
 * Non-ok outcomes become results the workflow acts on: it owns backoff for 429 and 5xx (durable
 * timers, Retry-After honoured). Only network errors are retried here, by Temporal, until
 * HTTP_ATTEMPTS; the last one becomes a result too.
 */
function failed(fetched: Exclude<FetchPageResult, { kind: 'ok' }>, attempt: number): FetchAndStoreResult {
  const error = describeFailure(fetched);
  if (fetched.kind === 'network-error' && attempt < HTTP_ATTEMPTS) {
    throw ApplicationFailure.retryable(error, `Fetch:${fetched.kind}`);
  }
  return {
    outcome: fetched.kind,
    ...(fetched.status === undefined ? {} : { status: fetched.status }),
    finalUrl: fetched.finalUrl,
    bytes: fetched.bytes,
    linksStored: 0,
    discovered: [],
    ...(fetched.kind === 'not-modified' ? {} : { error }),
    ...(fetched.kind === 'http-error' && fetched.retryAfter ? { retryAfter: fetched.retryAfter } : {}),
  };
}

export function describeFailure(fetched: Exclude<FetchPageResult, { kind: 'ok' }>): string {
  switch (fetched.kind) {
    case 'not-modified':
      return 'not modified (304)';
    case 'http-error':
      return `HTTP ${fetched.status}`;
    case 'blocked':
      return `blocked by the SSRF guard: ${fetched.message} (allow it with --allow-host)`;
    case 'unsupported-content-type':
      if (fetched.binary) return `binary content served as ${fetched.contentType ?? 'HTML'}`;
      return fetched.contentEncoding
        ? `unsupported content-encoding ${fetched.contentEncoding}`
        : `not an HTML page (content-type ${fetched.contentType ?? 'missing'})`;
    case 'too-large':
      return `body larger than ${fetched.limitBytes} bytes`;
    case 'redirect-limit':
      return fetched.reason === 'loop'
        ? `redirect loop at ${fetched.location}`
        : fetched.reason === 'refused'
          ? `redirect to ${fetched.location} not followed`
          : `too many redirects (last to ${fetched.location})`;
    case 'network-error':
      return fetched.timeout
        ? `${fetched.timeout} timeout: ${fetched.message}`
        : `${fetched.code}: ${fetched.message}`;
  }
}

export interface StoreOptions extends PageTaskOptions {
  /** Also run the render heuristics on the HTML; the verdict is `renderAssessment` in the result. */
  assess?: boolean;
  /** The crawl's robots.txt policy, asked about each link as the page wrote it (`ExtractedLink.asWritten`). */
  robots?: RobotsPolicy;
  /**
   * The fetch reports the verdict of the known page it asked for, which redirected: the target's
   * visit is recorded uncounted, and the target is handed back to be fetched by its own URL (when
   * this fetch claimed it), whose fetch counts it.
   */
  reportsAskedPage?: boolean;
}

/**
 * Stores a fetched (or rendered, `tier` 'browser') page with its edges and discoveries. The HTML is
 * read in a thread under the page's deadline; past it, the page is stored without its links, title
 * and meta robots, with an `extract-timeout` line in the fetch log saying so.
 */
export async function store(
  db: Database,
  input: FetchAndStoreInput,
  fetched: Extract<FetchPageResult, { kind: 'ok' }>,
  inScope: ScopePredicate,
  tier: FetchTier = 'http',
  options: StoreOptions = {},
): Promise<FetchAndStoreResult> {
  const finalUrl = canonicalizeUrl(fetched.finalUrl) ?? input.url;
  // A rendered page, or one whose type says nothing, is HTML as before.
  const kind = responseKindOf(fetched.contentType, fetched.finalUrl) ?? 'html';
  const read =
    kind === 'html' ? await readHtml(fetched, finalUrl, options) : await readDocument(fetched, kind, options);
  const { extraction, contentHash, bodyGz } = read.html;
  // A redirect stub (meta refresh or script location) is a hop, not a page: its target is claimed
  // and fetched through the normal path, robots and SSRF checks included (issue 27 item 3).
  const stub =
    kind === 'html' ? detectRedirectStub(fetched.text, finalUrl, extraction.metaRefreshUrl) : undefined;
  if (stub) return followStub(db, input, fetched, finalUrl, stub, inScope, options);
  const headerRobots = parseXRobotsTag(fetched.headers['x-robots-tag'], input.spec.userAgent);
  const directives = {
    noindex: extraction.metaRobots.noindex || headerRobots.noindex,
    nofollow: extraction.metaRobots.nofollow || headerRobots.nofollow,
  };
  // nofollow pages still record their edges in the graph; their links are just not followed.
  const candidates = directives.nofollow ? [] : followable(extraction, input, inScope, options.robots);
  const edges = dedupeEdges(extraction);
  const canonicalUrl = otherCanonical(extraction, finalUrl, inScope);
  if (canonicalUrl && !directives.nofollow)
    candidates.push({ url: canonicalUrl, origin: originOf(canonicalUrl), depth: input.depth });

  // The target of a known page that moved: its visit is counted by a fetch of its own URL.
  const moved = options.reportsAskedPage === true && finalUrl !== input.url;
  const { pageId, discovered, spilled, visit } = await db.transaction(async (tx) => {
    const previous = await loadKnownPage(tx, finalUrl);
    const page = await tx.query<{ id: number; created: boolean }>(
      `INSERT INTO pages (url, final_url, origin, crawl_id, depth, status, content_type, charset, etag, last_modified,
                          content_hash, body_bytes, body_gz, title, ttfb_ms, total_ms, noindex, fetch_tier, source_type,
                          document_failure, fetched_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, now())
       ON CONFLICT (url) DO UPDATE SET
         final_url = EXCLUDED.final_url, origin = EXCLUDED.origin, crawl_id = EXCLUDED.crawl_id, depth = EXCLUDED.depth,
         status = EXCLUDED.status, content_type = EXCLUDED.content_type, charset = EXCLUDED.charset,
         etag = EXCLUDED.etag, last_modified = EXCLUDED.last_modified, content_hash = EXCLUDED.content_hash,
         body_bytes = EXCLUDED.body_bytes, body_gz = EXCLUDED.body_gz, title = EXCLUDED.title,
         ttfb_ms = EXCLUDED.ttfb_ms, total_ms = EXCLUDED.total_ms, noindex = EXCLUDED.noindex,
         fetch_tier = EXCLUDED.fetch_tier, source_type = EXCLUDED.source_type,
         document_failure = EXCLUDED.document_failure, fetched_at = now()
       RETURNING id, (xmax = 0) AS created`,
      [
        finalUrl,
        fetched.finalUrl,
        originOf(finalUrl),
        input.crawlId,
        input.depth,
        fetched.status,
        fetched.contentType,
        fetched.charset,
        fetched.headers.etag ?? null,
        fetched.headers['last-modified'] ?? null,
        contentHash,
        fetched.bytes,
        bodyGz,
        extraction.title ?? null,
        fetched.timings.ttfbMs === undefined ? null : Math.round(fetched.timings.ttfbMs),
        Math.round(fetched.timings.totalMs),
        directives.noindex,
        tier,
        kind,
        read.failure?.reason ?? null,
      ],
    );
    const id = Number(page.rows[0]?.id);
    // xmax is 0 on a row this statement inserted, not on one it updated (even one committed by a
    // concurrent store of the same URL since \`previous\` was read).
    await replaceEdges(tx, id, edges, page.rows[0]?.created === true);
    if (read.timedOut) await recordLinkTimeout(tx, input, fetched, read.timedOut);
    if (read.failure) await recordDocumentFailure(tx, input, fetched, read.failure);
    // A redirect target is claimed too, so a link to it later does not fetch it again.
    if (finalUrl !== input.url)
      candidates.unshift({ url: finalUrl, origin: originOf(finalUrl), depth: input.depth });
    const claimed = await claim(tx, input, candidates, finalUrl);
    const visit = await trackStoredVisit(
      tx,
      input.crawlId,
      { id, contentHash, noindex: directives.noindex, ...(canonicalUrl ? { canonicalUrl } : {}) },
      previous,
      moved ? null : input.url,
    );
    return { pageId: id, ...claimed, visit };
  });

  return {
    outcome: 'ok',
    status: fetched.status,
    finalUrl,
    pageId,
    contentHash,
    bytes: fetched.bytes,
    linksStored: edges.length,
    discovered:
      moved && inScope(finalUrl) ? discovered : discovered.filter((found) => found.url !== finalUrl),
    ...(spilled > 0 ? { spilled } : {}),
    ...(directives.noindex ? { noindex: true } : {}),
    ...(read.html.assessment ? { renderAssessment: read.html.assessment } : {}),
    ...visit,
  };
}

/**
 * Records a redirect stub in the fetch log (`redirect-stub`, its target as final URL) and claims its
 * target like a redirect's, when in scope; the stub itself is never stored as a page.
 */
async function followStub(
  db: Database,
  input: FetchAndStoreInput,
  fetched: Extract<FetchPageResult, { kind: 'ok' }>,
  finalUrl: string,
  stub: RedirectStub,
  inScope: ScopePredicate,
  options: StoreOptions,
): Promise<FetchAndStoreResult> {
  const admitted =
    isCrawlable(stub.target, inScope, input.spec.contentTypes ?? CONTENT_TYPES) &&
    admitLink(stub.target, inScope);
  const { discovered, spilled } = await db.transaction(async (tx) => {
    await tx.query(
      `INSERT INTO fetches (crawl_id, url, final_url, outcome, status, bytes, error, started_at)
       VALUES ($1, $2, $3, 'redirect-stub', $4, $5, $6, now())`,
      [
        input.crawlId,
        input.url,
        stub.target,
        fetched.status,
        fetched.bytes,
        `${stub.via} stub to ${stub.target}${admitted ? '' : ': out of scope, not followed'}`,
      ],
    );
    const hop = admitted ? [{ url: stub.target, origin: originOf(stub.target), depth: input.depth }] : [];
    return claim(tx, input, hop, finalUrl);
  });
  // A known page that became a stub no longer serves what its row holds: it leaves search as a page
  // that now redirects does, and comes back when it answers with content again. Left alone, its old
  // text stayed searchable for good.
  const known = await loadKnownPage(db, finalUrl);
  const moved = options.reportsAskedPage === true && finalUrl !== input.url;
  const visit = known
    ? await trackGone(db, input.crawlId, known, fetched.status, {
        reason: `${stub.via}-stub`,
        countedBy: moved ? null : input.url,
      })
    : {};
  return {
    outcome: 'ok',
    status: fetched.status,
    finalUrl,
    bytes: fetched.bytes,
    linksStored: 0,
    discovered: discovered.filter((found) => found.url !== finalUrl),
    ...(spilled > 0 ? { spilled } : {}),
    ...visit,
  };
}

/**
 * The page's HTML read in a thread (fetched-html.ts). Past the deadline the body is still kept: hashed
 * here and gzipped in libuv's pool (both linear, and native), with no links. The page then goes to
 * extraction like any other, under its own deadline; it is not failed here, since a fetch worker under
 * heavy load may also miss a deadline that a quieter page worker meets.
 */
async function readHtml(
  fetched: Extract<FetchPageResult, { kind: 'ok' }>,
  finalUrl: string,
  options: StoreOptions,
): Promise<ReadBody> {
  try {
    const html = await readFetchedHtmlInThread(
      { text: fetched.text, body: fetched.body, finalUrl: fetched.finalUrl, assess: options.assess === true },
      {
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.deadlineMs ? { deadlineMs: options.deadlineMs } : {}),
      },
    );
    return { html: { ...html, bodyGz: asBuffer(html.bodyGz) } };
  } catch (error) {
    return readPastDeadline(error, fetched, finalUrl);
  }
}

/** What the fetch path read of a body: links and metadata, hash and gzip, and a document's failure. */
interface ReadBody {
  html: FetchedHtml;
  timedOut?: ThreadDeadlineError;
  failure?: FetchedDocument['failure'];
}

/**
 * A document's links, title and hash, read in the same thread pool under the same deadline as HTML;
 * past it the document is kept without its links, as an HTML page is.
 */
async function readDocument(
  fetched: Extract<FetchPageResult, { kind: 'ok' }>,
  type: DocumentType,
  options: StoreOptions,
): Promise<ReadBody> {
  const finalUrl = fetched.finalUrl;
  try {
    const { failure, ...html } = await readFetchedDocumentInThread(
      { body: fetched.body, finalUrl, type, ...(fetched.charset ? { charset: fetched.charset } : {}) },
      {
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.deadlineMs ? { deadlineMs: options.deadlineMs } : {}),
      },
    );
    return { html: { ...html, bodyGz: asBuffer(html.bodyGz) }, ...(failure ? { failure } : {}) };
  } catch (error) {
    return readPastDeadline(error, fetched, finalUrl);
  }
}

async function readPastDeadline(
  error: unknown,
  fetched: Extract<FetchPageResult, { kind: 'ok' }>,
  finalUrl: string,
): Promise<ReadBody> {
  if (!(error instanceof ThreadDeadlineError)) throw error;
  return {
    html: {
      extraction: { links: [], baseUrl: finalUrl, metaRobots: { noindex: false, nofollow: false } },
      contentHash: createHash('sha256').update(fetched.body).digest('hex'),
      bodyGz: await gzipAsync(fetched.body),
    },
    timedOut: error,
  };
}

/** A byte array that came back from a thread, as the Buffer the database drivers take for bytea. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The fetch log's line for a page stored without its links: its HTML outran the page's deadline. */
async function recordLinkTimeout(
  tx: Queryable,
  input: FetchAndStoreInput,
  fetched: Extract<FetchPageResult, { kind: 'ok' }>,
  timedOut: ThreadDeadlineError,
): Promise<void> {
  await tx.query(
    `INSERT INTO fetches (crawl_id, url, final_url, outcome, status, bytes, error, started_at)
     VALUES ($1, $2, $3, 'extract-timeout', $4, $5, $6, now())`,
    [
      input.crawlId,
      input.url,
      fetched.finalUrl,
      fetched.status,
      fetched.bytes,
      `extract-timeout: ${timedOut.message}; the page was stored without its links, title and meta robots`,
    ],
  );
}

/**
 * The fetch log's line for a document that gave no content, its outcome the named reason
 * (`pdf-encrypted`, `pdf-broken`, `pdf-no-text`, …), so the crawl's failures list it by name. The
 * page is still stored (with `document_failure`); the crawl goes on.
 */
async function recordDocumentFailure(
  tx: Queryable,
  input: FetchAndStoreInput,
  fetched: Extract<FetchPageResult, { kind: 'ok' }>,
  failure: NonNullable<FetchedDocument['failure']>,
): Promise<void> {
  await tx.query(
    `INSERT INTO fetches (crawl_id, url, final_url, outcome, status, bytes, error, started_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, now())`,
    [
      input.crawlId,
      input.url,
      fetched.finalUrl,
      failure.reason,
      fetched.status,
      fetched.bytes,
      `${failure.reason}: ${failure.message}`,
    ],
  );
}

/** The page's rel=canonical when it names another URL in scope: this page is then its duplicate. */
function otherCanonical(
  extraction: LinkExtraction,
  finalUrl: string,
  inScope: ScopePredicate,
): string | undefined {
  const canonical = extraction.canonicalUrl;
  return canonical && canonical !== finalUrl && inScope(canonical) ? canonical : undefined;
}

/** Links the crawl may follow from this page: in scope, within depth, not traps, not nofollow. */
function followable(
  extraction: LinkExtraction,
  input: FetchAndStoreInput,
  inScope: ScopePredicate,
  robots: RobotsPolicy | undefined,
): DiscoveredUrl[] {
  const depth = input.depth + 1;
  if (depth > input.spec.maxDepth) return [];
  const urls = extraction.links
    .filter(
      (link) =>
        !link.nofollow &&
        link.tag !== 'link' &&
        keepsLanguage(link.hreflang, input.spec.lang) &&
        !refusedAsWritten(link, robots, input.spec.userAgent),
    )
    .map((link) => link.url);
  if (extraction.metaRefreshUrl) urls.push(extraction.metaRefreshUrl);
  const seen = new Set<string>();
  const result: DiscoveredUrl[] = [];
  for (const url of urls) {
    if (seen.has(url)) continue;
    seen.add(url);
    if (!isCrawlable(url, inScope, input.spec.contentTypes ?? CONTENT_TYPES) || !admitLink(url, inScope))
      continue;
    result.push({ url, origin: originOf(url), depth });
  }
  return result;
}

/**
 * Whether robots.txt refuses the link in the form the page wrote it, which canonicalisation changed
 * (parameters sorted or dropped) into one it might allow: `/search?q=x&page=2` under
 * `Disallow: /search?q=` would otherwise be fetched as `/search?page=2&q=x`. The fetch checks the
 * canonical form itself. Judged from robots.txt this process holds (the page's own origin's, checked
 * just before its fetch, and any other's read lately); an origin whose robots.txt is not at hand is
 * not asked for it here, at discovery.
 */
function refusedAsWritten(link: ExtractedLink, robots: RobotsPolicy | undefined, userAgent: string): boolean {
  if (!link.asWritten || !robots) return false;
  let origin: string;
  try {
    origin = originOf(link.url);
  } catch {
    return false;
  }
  return robots.memoryVerdict(link.asWritten, origin, userAgent)?.allowed === false;
}

/**
 * With `--lang`, a link marked as an alternate in another language (`hreflang="fr"`) is not followed:
 * the page behind it would only be flagged wrong-language. A link without hreflang is followed.
 */
function keepsLanguage(hreflang: string | undefined, lang: readonly string[] | undefined): boolean {
  if (!hreflang || !lang || lang.length === 0) return true;
  const code = normalizeLanguageTag(hreflang);
  // eld cannot tell Indonesian from Malay, so the verdict takes either for the other; so does this.
  const same = code === 'id' ? 'ms' : code === 'ms' ? 'id' : code;
  return code === undefined || lang.includes(code) || (same !== undefined && lang.includes(same));
}

interface Edge {
  toUrl: string;
  anchorText: string;
  rel: string;
  nofollow: boolean;
  tag: string;
}

function dedupeEdges(extraction: LinkExtraction): Edge[] {
  const edges = new Map<string, Edge>();
  for (const link of extraction.links) {
    const key = `${link.url}\u0000${link.anchorText}`;
    if (!edges.has(key)) {
      edges.set(key, {
        toUrl: link.url,
        anchorText: link.anchorText,
        rel: link.rel,
        nofollow: link.nofollow,
        tag: link.tag,
      });
    }
  }
  if (extraction.metaRefreshUrl) {
    const key = `${extraction.metaRefreshUrl}\u0000`;
    if (!edges.has(key))
      edges.set(key, {
        toUrl: extraction.metaRefreshUrl,
        anchorText: '',
        rel: 'refresh',
        nofollow: false,
        tag: 'meta',
      });
  }
  return [...edges.values()];
}

/** `newPage`: the row was created in this transaction, so it has no links to delete yet. */
async function replaceEdges(tx: Queryable, pageId: number, edges: Edge[], newPage: boolean): Promise<void> {
  if (!newPage) await tx.query('DELETE FROM links WHERE from_page_id = $1', [pageId]);
  if (edges.length === 0) return;
  await tx.query(
    `INSERT INTO links (from_page_id, to_url, anchor_text, rel, nofollow, tag)
     SELECT $1::bigint, u.* FROM unnest($2::text[], $3::text[], $4::text[], $5::boolean[], $6::text[]) AS u`,
    [
      pageId,
      edges.map((edge) => edge.toUrl),
      edges.map((edge) => edge.anchorText),
      edges.map((edge) => edge.rel),
      edges.map((edge) => edge.nofollow),
      edges.map((edge) => edge.tag),
    ],
  );
}

/**
 * Claims the candidates for this crawl and returns those this page owns: the claims made now and
 * those recorded under its `discovered_from` by an earlier attempt, so a retried attempt's answer is
 * identical to the first one's and no URL is lost when an attempt dies after committing.
 */
async function claim(
  tx: Queryable,
  input: FetchAndStoreInput,
  candidates: DiscoveredUrl[],
  finalUrl: string,
): Promise<{ discovered: DiscoveredUrl[]; spilled: number }> {
  // What this URL owns: the claims it makes now (RETURNING) and any an earlier attempt of it made and
  // committed, in one round trip. A URL another page claimed first is not ours (ON CONFLICT).
  const owned = await tx.query<OwnedClaim>(
    `WITH made AS (
       INSERT INTO crawl_urls (crawl_id, url, origin, depth, discovered_from)
       SELECT $1::text, u.*, $5::text FROM unnest($2::text[], $3::text[], $4::int[]) AS u
       ON CONFLICT (crawl_id, url) DO NOTHING
       RETURNING url, origin, depth, spilled, discovered_at)
     SELECT url, origin, depth, spilled FROM (
       SELECT url, origin, depth, spilled, discovered_at FROM made
       UNION ALL
       SELECT url, origin, depth, spilled, discovered_at FROM crawl_urls
        WHERE crawl_id = $1 AND discovered_from = $5) AS mine
      ORDER BY discovered_at, url`,
    [
      input.crawlId,
      candidates.map((c) => c.url),
      candidates.map((c) => c.origin),
      candidates.map((c) => c.depth),
      input.url,
    ],
  );
  if (input.frontierRoom !== undefined)
    return spillBeyondRoom(tx, input.crawlId, input.url, input.frontierRoom, owned.rows, finalUrl);
  return { discovered: owned.rows.map(({ url, origin, depth }) => ({ url, origin, depth })), spilled: 0 };
}
