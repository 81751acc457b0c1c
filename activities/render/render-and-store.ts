/**
 * The rendering activity (task queue gleaner-render): robots and the SSRF guard first, exactly as
 * a plain fetch; then the page in headless Chromium, every request it makes (the document first)
 * answered through the browser network (browser-network.ts), never by Chromium itself; then the
 * rendered DOM is stored like a fetched body (same page row, edges and discoveries, tier
 * 'browser'), so extraction, links and chunks run unchanged on what a reader would see.
 */

import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Database } from '../../db/database';
import { originGapMs } from '../../domain/politeness/gap';
import type { ScopePredicate } from '../../domain/scope';
import { originOf } from '../../domain/url';
import { robotsBlocked, scopeOfPage, store } from '../fetch-and-store';
import { withHeartbeat } from '../heartbeat';
import { BlockedUrlError } from '../http/errors';
import type { FetchOk } from '../http/fetch-result';
import { checkUrl, type Resolver } from '../http/ssrf-guard';
import { assessHtmlInThread } from '../page-analysis-pool';
import type { RobotsPolicy } from '../robots-policy';
import { createScopeCache } from '../scope-cache';
import { ThreadDeadlineError } from '../thread-deadline';
import type { FetchAndStoreResult, RenderAndStoreInput, RenderAndStoreResult } from '../types';
import { createBrowserNetwork } from './browser-network';
import { BrowserPool, type BrowserPoolOptions, BrowserUnavailableError } from './browser-pool';
import { NavigationRefusedError, type RenderedPage, renderPage } from './render-page';
import { SubresourceCache } from './subresource-cache';

/** A render beats every 2 s, like a fetch (its heartbeat timeout is 10 s). */
const HEARTBEAT = { intervalMs: 2_000 };

/** Time left at the end of a render's navigation deadline for what was already requested to arrive. */
const SEND_MARGIN_MS = 5_000;

let sharedPool: BrowserPool | undefined;
/** Scripts and stylesheets shared by the renders of this process (subresource-cache.ts). */
const sharedSubresources = new SubresourceCache();
let sharedPoolOptions: BrowserPoolOptions = {};

/** Sets options of the process's next pool (the worker's slots decide maxPages); merged with earlier ones. */
export function configureRenderPool(options: BrowserPoolOptions): void {
  sharedPoolOptions = { ...sharedPoolOptions, ...options };
}

/** The process's browser pool; nothing is launched until the first page needs it. */
export function renderPool(): BrowserPool {
  sharedPool ??= new BrowserPool(sharedPoolOptions);
  return sharedPool;
}

/** Closes the process's browsers (worker shutdown). */
export async function closeRenderPool(): Promise<void> {
  const pool = sharedPool;
  sharedPool = undefined;
  await pool?.close();
}

export interface RenderAndStoreDeps {
  db: Database;
  robots: RobotsPolicy;
  /** @default the process's shared pool */
  pool?: () => BrowserPool;
  /** Name resolution for the SSRF guard and the browser's pinned sockets. @default the system resolver */
  resolve?: Resolver;
}

export function createRenderAndStore({ db, robots, pool = renderPool, resolve }: RenderAndStoreDeps) {
  const scopes = createScopeCache(db);

  return async function renderAndStore(input: RenderAndStoreInput): Promise<RenderAndStoreResult> {
    const context = Context.current();
    return withHeartbeat(async () => {
      const origin = originOf(input.url);
      const verdict = await robots.check(input.url, origin, {
        userAgent: input.spec.userAgent,
        allowHosts: input.spec.allowHosts,
        signal: context.cancellationSignal,
      });
      if (!verdict.allowed) return await robotsBlocked(db, input, verdict);
      try {
        await checkUrl(input.url, {
          allowHosts: input.spec.allowHosts,
          signal: context.cancellationSignal,
          ...(resolve ? { resolve } : {}),
        });
      } catch (error) {
        if (!(error instanceof BlockedUrlError)) throw error;
        const message = `blocked by the SSRF guard: ${error.message} (allow it with --allow-host)`;
        await recordRender(db, input, { outcome: 'blocked', error: message });
        return {
          outcome: 'blocked',
          finalUrl: input.url,
          bytes: 0,
          linksStored: 0,
          discovered: [],
          error: message,
        };
      }
      // The origin's gap holds between the page's own requests too; Crawl-delay can only raise it.
      const robotsRecord = await robots.load(
        origin,
        {
          userAgent: input.spec.userAgent,
          allowHosts: input.spec.allowHosts,
          signal: context.cancellationSignal,
        },
        true,
      );
      // An input scheduled before it carried delayMs is owed the spec's default delay, not nothing.
      const minGapMs = originGapMs(
        input.spec.delayMs,
        robots.crawlDelayMs(robotsRecord, input.spec.userAgent),
      );
      const navigationTimeoutMs = input.spec.bodyTimeoutMs ?? 30_000;
      let rendered: RenderedPage;
      try {
        rendered = await renderPage(pool(), input.url, {
          userAgent: input.spec.userAgent,
          network: createBrowserNetwork({
            minGapMs,
            sendByMs: Date.now() + Math.max(0, navigationTimeoutMs - SEND_MARGIN_MS),
            cache: sharedSubresources,
            userAgent: input.spec.userAgent,
            allowHosts: input.spec.allowHosts,
            robots,
            maxRedirects: input.spec.maxRedirects,
            maxBodyBytes: input.spec.maxBodyBytes,
            ...(input.spec.bodyTimeoutMs ? { bodyTimeoutMs: input.spec.bodyTimeoutMs } : {}),
            ...(resolve ? { resolve } : {}),
            signal: context.cancellationSignal,
          }),
          ...(input.settleMs !== undefined ? { settleMs: input.settleMs } : {}),
          navigationTimeoutMs,
        });
      } catch (error) {
        if (error instanceof BrowserUnavailableError)
          throw ApplicationFailure.nonRetryable(error.message, error.name);
        if (error instanceof NavigationRefusedError) {
          await recordRender(db, input, { outcome: 'blocked', error: error.message });
          return {
            outcome: 'blocked',
            finalUrl: input.url,
            bytes: 0,
            linksStored: 0,
            discovered: [],
            error: error.message,
          };
        }
        // A crash or a deadline: Temporal retries (a fresh browser is launched if this one died).
        throw ApplicationFailure.retryable(
          `rendering ${input.url} failed: ${(error as Error).message}`,
          'RenderFailed',
        );
      }
      const result = await storeRendered(
        input,
        rendered,
        await scopeOfPage(scopes, input, rendered.finalUrl),
        context.cancellationSignal,
      );
      const responseEndedMs = rendered.startedAtMs + rendered.totalMs;
      return { ...result, msSinceResponse: Math.max(0, Date.now() - responseEndedMs) };
    }, HEARTBEAT);
  };

  async function storeRendered(
    input: RenderAndStoreInput,
    rendered: RenderedPage,
    inScope: ScopePredicate,
    signal: AbortSignal,
  ): Promise<RenderAndStoreResult> {
    const body = Buffer.from(rendered.html, 'utf8');
    const contentType = (rendered.headers['content-type'] ?? 'text/html').split(';')[0]?.trim().toLowerCase();
    const base = { finalUrl: rendered.finalUrl, requestsRefused: rendered.refused.length };
    if (rendered.status < 200 || rendered.status >= 300) {
      const error = `HTTP ${rendered.status}`;
      await recordRender(db, input, { outcome: 'http-error', status: rendered.status, error, rendered });
      const retryAfter = rendered.headers['retry-after'];
      return {
        ...base,
        outcome: 'http-error',
        status: rendered.status,
        bytes: 0,
        linksStored: 0,
        discovered: [],
        error,
        ...(retryAfter ? { retryAfter } : {}),
      };
    }
    if (contentType !== 'text/html' && contentType !== 'application/xhtml+xml') {
      const error = `not an HTML page (content-type ${contentType})`;
      await recordRender(db, input, {
        outcome: 'unsupported-content-type',
        status: rendered.status,
        error,
        rendered,
      });
      return {
        ...base,
        outcome: 'unsupported-content-type',
        bytes: 0,
        linksStored: 0,
        discovered: [],
        error,
      };
    }
    if (body.length > input.spec.maxBodyBytes) {
      const error = `rendered DOM larger than ${input.spec.maxBodyBytes} bytes`;
      await recordRender(db, input, { outcome: 'too-large', status: rendered.status, error, rendered });
      return { ...base, outcome: 'too-large', bytes: 0, linksStored: 0, discovered: [], error };
    }
    const fetched: FetchOk = {
      kind: 'ok',
      requestedUrl: input.url,
      finalUrl: rendered.finalUrl,
      redirects: rendered.redirects,
      status: rendered.status,
      headers: pickHeaders(rendered.headers),
      timings: { startedAtMs: rendered.startedAtMs, totalMs: rendered.totalMs },
      bytes: body.length,
      wireBytes: body.length,
      body,
      text: rendered.html,
      charset: 'utf-8',
      contentType,
    };
    await recordRender(db, input, { outcome: 'ok', status: rendered.status, rendered });
    // The rendered DOM is judged in the same thread pass as its links; the HTML the server sent, apart.
    const [{ renderAssessment: renderedAssessment, ...stored }, rawAssessment] = await Promise.all([
      store(db, input, fetched, inScope, 'browser', { assess: true, signal, robots }),
      assessRaw(rendered.rawHtml, signal),
    ]);
    return {
      ...(stored satisfies FetchAndStoreResult),
      ...base,
      ...(rawAssessment && renderedAssessment
        ? {
            rawTextChars: rawAssessment.visibleTextChars,
            renderedTextChars: renderedAssessment.visibleTextChars,
          }
        : {}),
    };
  }
}

/** The render heuristics on the server's HTML; none past the page's deadline (nothing is learnt then). */
async function assessRaw(html: string, signal: AbortSignal) {
  try {
    return await assessHtmlInThread(html, { signal });
  } catch (error) {
    if (error instanceof ThreadDeadlineError) return undefined;
    throw error;
  }
}

function pickHeaders(headers: Record<string, string>): FetchOk['headers'] {
  const picked: Record<string, string> = {};
  for (const name of ['content-type', 'etag', 'last-modified', 'x-robots-tag', 'content-language']) {
    const value = headers[name];
    if (value !== undefined) picked[name] = value;
  }
  return picked;
}

async function recordRender(
  db: Database,
  input: RenderAndStoreInput,
  entry: { outcome: string; status?: number; error?: string; rendered?: RenderedPage },
): Promise<void> {
  const refused = entry.rendered?.refused ?? [];
  const note =
    refused.length > 0
      ? `${refused.length} request(s) refused, e.g. ${refused[0]?.url}: ${refused[0]?.reason}`
      : null;
  await db.query(
    `INSERT INTO fetches (crawl_id, url, final_url, outcome, status, bytes, total_ms, error, started_at, tier)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, to_timestamp($9 / 1000.0), 'browser')`,
    [
      input.crawlId,
      input.url,
      entry.rendered?.finalUrl ?? input.url,
      entry.outcome,
      entry.status ?? null,
      entry.rendered ? Buffer.byteLength(entry.rendered.html) : 0,
      entry.rendered ? Math.round(entry.rendered.totalMs) : null,
      entry.error ?? note,
      entry.rendered?.startedAtMs ?? Date.now(),
    ],
  );
}
