/**
 * Reading a crawl workflow's runs from their histories: what state each run was carried into by
 * continue-as-new (the workflow's second argument).
 */
import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import type { CrawlState } from '../workflows/crawl-workflow';

/** The state a run of the crawl workflow began with, or undefined for a crawl's first run. */
export function carriedCrawlState(history: temporal.api.history.v1.IHistory): CrawlState | undefined {
  const carried = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[1];
  return carried ? defaultPayloadConverter.fromPayload<CrawlState>(carried) : undefined;
}
