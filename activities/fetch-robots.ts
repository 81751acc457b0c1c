/**
 * The robots activity an origin workflow runs before its first page: loads (or fetches) the
 * origin's robots.txt and returns what the workflow needs — whether it may crawl at all and the
 * Crawl-delay. Unreachable robots.txt is retried by Temporal a few times, then settles as
 * disallow-all, which the workflow turns into "origin not crawled".
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Database } from '../db/database';
import { HTTP_ATTEMPTS } from './fetch-and-store';
import { type RobotsPolicy, RobotsTransientError } from './robots-policy';
import type { FetchRobotsInput, FetchRobotsResult } from './types';

export function createFetchRobots({ db, robots }: { db: Database; robots: RobotsPolicy }) {
  return async function fetchRobots(input: FetchRobotsInput): Promise<FetchRobotsResult> {
    const context = Context.current();
    const finalAttempt = context.info.attempt >= HTTP_ATTEMPTS;
    let record: Awaited<ReturnType<RobotsPolicy['load']>>;
    try {
      record = await robots.load(
        input.origin,
        { userAgent: input.userAgent, allowHosts: input.allowHosts, signal: context.cancellationSignal },
        finalAttempt,
      );
    } catch (error) {
      if (error instanceof RobotsTransientError)
        throw ApplicationFailure.retryable(error.message, error.name);
      throw error;
    }
    if (record.error) {
      await db.query(
        `INSERT INTO fetches (crawl_id, url, outcome, status, bytes, error, started_at) VALUES ($1, $2, $3, $4, 0, $5, now())`,
        [
          input.crawlId,
          `${input.origin}/robots.txt`,
          `robots-${record.source}`,
          record.httpStatus ?? null,
          record.error,
        ],
      );
    }
    const crawlDelayMs = robots.crawlDelayMs(record, input.userAgent);
    return {
      source: record.source,
      ...(record.httpStatus === undefined ? {} : { httpStatus: record.httpStatus }),
      ...(crawlDelayMs === undefined ? {} : { crawlDelayMs }),
      sitemapCount: robots.sitemaps(record).length,
      ...(record.error ? { error: record.error } : {}),
    };
  };
}
