/**
 * What Temporal says of a crawl's workflow: its status and, while it runs, its live progress (the
 * workflow's progress query). `GET /crawls/:id` and the MCP crawl tools both ask through this, each
 * with its own deadline and its own answer when Temporal has no such workflow.
 */
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { CrawlProgress } from '../domain/crawl-messages';
import { CRAWL_PROGRESS_QUERY, crawlWorkflowId } from '../domain/temporal-names';

export interface CrawlWorkflowState {
  /** Temporal's execution status: RUNNING, COMPLETED, TERMINATED, … */
  workflowStatus: string;
  /** The live progress; null once the workflow is no longer running (it answers no queries then). */
  progress: CrawlProgress | null;
  startTime: Date;
}

/** Throws Temporal's WorkflowNotFoundError when there is no workflow for the crawl. */
export async function crawlWorkflowState(client: Client, crawlId: string): Promise<CrawlWorkflowState> {
  const handle = client.workflow.getHandle(crawlWorkflowId(crawlId));
  const description = await handle.describe();
  const workflowStatus = description.status.name;
  const progress =
    workflowStatus === 'RUNNING' ? await handle.query<CrawlProgress>(CRAWL_PROGRESS_QUERY) : null;
  return { workflowStatus, progress, startTime: description.startTime };
}

const SCHEDULED_BY_ID = defineSearchAttributeKey('TemporalScheduledById', SearchAttributeType.KEYWORD);

/** A crawl's workflow as Temporal describes it, without asking a worker (a query would need one). */
export interface CrawlWorkflowRecord {
  workflowStatus: string;
  startTime: Date;
  /** The schedule that started it, when one did. */
  scheduleId?: string;
}

/**
 * The crawl's workflow, or undefined when Temporal has none. Answers even when no worker runs: a
 * crawl a schedule fired (or `temporal workflow start` began) while no gleaner worker polled is open
 * here and absent from the store until a worker takes its first task.
 */
export async function crawlWorkflowRecord(
  client: Client,
  crawlId: string,
): Promise<CrawlWorkflowRecord | undefined> {
  try {
    const description = await client.workflow.getHandle(crawlWorkflowId(crawlId)).describe();
    const scheduleId = description.typedSearchAttributes.get(SCHEDULED_BY_ID);
    return {
      workflowStatus: description.status.name,
      startTime: description.startTime,
      ...(scheduleId ? { scheduleId } : {}),
    };
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return undefined;
    throw error;
  }
}
