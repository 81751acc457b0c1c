/**
 * What Temporal says of a crawl's workflow: its status and, while it runs, its live progress (the
 * workflow's progress query). `GET /crawls/:id` and the MCP crawl tools both ask through this, each
 * with its own deadline and its own answer when Temporal has no such workflow.
 */
import type { Client } from '@temporalio/client';
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
