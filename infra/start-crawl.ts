/**
 * Starting a crawl by id, shared by `gleaner crawl` and `POST /crawls`. A crawl id names one crawl
 * forever: a finished crawl (its row in `crawls`, or its closed workflow) is never started again,
 * because Temporal's default reuse policy would start a fresh run under the same id and overwrite
 * its record. An id whose crawl is still open can be resumed instead (the CLI does that).
 */
import {
  type Client,
  WorkflowExecutionAlreadyStartedError,
  type WorkflowHandle,
  WorkflowNotFoundError,
} from '@temporalio/client';
import type { Database } from '../db/database';
import type { CrawlSpec } from '../domain/crawl-spec';
import { CRAWL_WORKFLOW_START, crawlWorkflowId, WORKFLOW_TYPES } from '../domain/temporal-names';

/** The id belongs to another crawl that may not be started again (exit 2, HTTP 409). */
export class CrawlIdTakenError extends Error {
  override readonly name = 'CrawlIdTakenError';
  constructor(
    message: string,
    /** 'finished' or 'running'. */
    readonly state: 'finished' | 'running',
  ) {
    super(message);
  }
}

export interface StartedCrawl {
  handle: WorkflowHandle;
  workflowId: string;
  /** True when the id named an open crawl and this call attached to it instead of starting one. */
  resumed: boolean;
}

/** The stored status of a crawl, if it was ever registered. */
export async function storedCrawlStatus(db: Database, crawlId: string): Promise<string | undefined> {
  const result = await db.query<{ status: string }>('SELECT status FROM crawls WHERE id = $1', [crawlId]);
  return result.rows[0]?.status;
}

function finishedError(crawlId: string, status: string): CrawlIdTakenError {
  return new CrawlIdTakenError(
    `crawl ${crawlId} has already finished (${status.toLowerCase()}); a finished crawl is never overwritten — choose another crawl id`,
    'finished',
  );
}

export async function startCrawl(
  client: Client,
  db: Database,
  spec: CrawlSpec,
  options: { resumeOpen: boolean },
): Promise<StartedCrawl> {
  const workflowId = crawlWorkflowId(spec.crawlId);
  const handle = client.workflow.getHandle(workflowId);
  // Temporal first (an outage is reported as Temporal's), then the store, which remembers finished
  // crawls beyond Temporal's retention.
  const existing = await describeOrUndefined(handle);
  // The store is read even when the workflow is open: the crawl writes its final status there just
  // before its workflow closes, and in that moment the id names a finished crawl, not a running one.
  const stored = await storedCrawlStatus(db, spec.crawlId);
  if (stored !== undefined && stored !== 'running') throw finishedError(spec.crawlId, stored);
  if (existing) return attach(handle, workflowId, existing, spec.crawlId, options);
  try {
    const started = await client.workflow.start(WORKFLOW_TYPES.crawl, {
      ...CRAWL_WORKFLOW_START,
      workflowId,
      args: [spec],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
    });
    return { handle: started, workflowId, resumed: false };
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    // Started by someone else in between.
    const status = (await handle.describe()).status.name;
    return attach(handle, workflowId, status, spec.crawlId, options);
  }
}

async function describeOrUndefined(handle: WorkflowHandle): Promise<string | undefined> {
  try {
    return (await handle.describe()).status.name;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return undefined;
    throw error;
  }
}

function attach(
  handle: WorkflowHandle,
  workflowId: string,
  status: string,
  crawlId: string,
  options: { resumeOpen: boolean },
): StartedCrawl {
  if (status !== 'RUNNING') throw finishedError(crawlId, status);
  if (!options.resumeOpen) throw new CrawlIdTakenError(`crawl ${crawlId} is already running`, 'running');
  return { handle, workflowId, resumed: true };
}
