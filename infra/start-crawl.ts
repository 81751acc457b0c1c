/**
 * The one way a crawl starts: `gleaner crawl` and `POST /crawls` with a spec, `gleaner schedule
 * trigger` and `POST /schedules/:id/trigger` through a schedule. A crawl id names one crawl
 * forever: a finished crawl (its row in `crawls`, or its closed workflow) is never started again,
 * because Temporal's default reuse policy would start a fresh run under the same id and overwrite
 * its record. An id whose crawl is still open can be resumed instead (the CLI does that).
 *
 * A trigger gets the same checks before Temporal is asked: the crawl id it will start is known
 * (the schedule id and the trigger's nominal time) and must be free, and the schedule's spec must
 * be one `crawlWorkflow` accepts (a schedule made by hand with `temporal schedule create` may carry
 * anything). A schedule's own fires are started by Temporal: their spec was validated by the
 * same builder when the schedule was created, and each fire's id is new by construction.
 */
import { randomBytes } from 'node:crypto';
import {
  type Client,
  WorkflowExecutionAlreadyStartedError,
  type WorkflowHandle,
  WorkflowNotFoundError,
} from '@temporalio/client';
import type { Database } from '../db/database';
import { buildCrawlSpec, type CrawlRequest } from '../domain/crawl-request';
import { type CrawlSpec, InvalidCrawlSpecError } from '../domain/crawl-spec';
import { InvalidScheduleError, type OverlapName } from '../domain/schedule-spec';
import { CRAWL_WORKFLOW_START, crawlWorkflowId, WORKFLOW_TYPES } from '../domain/temporal-names';
import { triggerCrawlSchedule } from './crawl-schedules';

/** A new crawl's id when none is given: its start time, readable, and a short random tail. */
export function newCrawlId(): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '-');
  return `${stamp}-${randomBytes(3).toString('hex')}`;
}

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
  crawlId: string;
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

/** How to start: a spec (CLI and API), or a schedule to trigger now (CLI and API). */
export type CrawlStart =
  | { spec: CrawlSpec; resumeOpen: boolean }
  | { scheduleId: string; overlap?: OverlapName; timeoutMs?: number };

export async function startCrawl(client: Client, db: Database, start: CrawlStart): Promise<StartedCrawl> {
  if ('scheduleId' in start) return triggerSchedule(client, db, start);
  const { spec } = start;
  const workflowId = crawlWorkflowId(spec.crawlId);
  const handle = client.workflow.getHandle(workflowId);
  // Temporal first (an outage is reported as Temporal's), then the store, which remembers finished
  // crawls beyond Temporal's retention.
  const existing = await describeOrUndefined(handle);
  await refuseFinished(db, spec.crawlId);
  if (existing) return attach(handle, workflowId, existing, spec.crawlId, start);
  try {
    const started = await client.workflow.start(WORKFLOW_TYPES.crawl, {
      ...CRAWL_WORKFLOW_START,
      workflowId,
      args: [spec],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
    });
    return { crawlId: spec.crawlId, handle: started, workflowId, resumed: false };
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    // Started by someone else in between.
    const status = (await handle.describe()).status.name;
    return attach(handle, workflowId, status, spec.crawlId, start);
  }
}

/**
 * The store is read even when the workflow is open: the crawl writes its final status there just
 * before its workflow closes, and in that moment the id names a finished crawl, not a running one.
 */
async function refuseFinished(db: Database, crawlId: string): Promise<void> {
  const stored = await storedCrawlStatus(db, crawlId);
  if (stored !== undefined && stored !== 'running') throw finishedError(crawlId, stored);
}

async function triggerSchedule(
  client: Client,
  db: Database,
  start: { scheduleId: string; overlap?: OverlapName; timeoutMs?: number },
): Promise<StartedCrawl> {
  const { crawlId, workflowId } = await triggerCrawlSchedule(client, start.scheduleId, {
    ...(start.overlap ? { overlap: start.overlap } : {}),
    ...(start.timeoutMs !== undefined ? { timeoutMs: start.timeoutMs } : {}),
    check: async (planned) => {
      // What startCrawl refuses for a spec, refused for the schedule's before anything starts.
      try {
        const request = typeof planned.crawl === 'object' && planned.crawl ? planned.crawl : {};
        buildCrawlSpec(request as CrawlRequest, planned.crawlId);
      } catch (error) {
        if (!(error instanceof InvalidCrawlSpecError)) throw error;
        throw new InvalidScheduleError(
          `schedule ${start.scheduleId} starts a crawl gleaner refuses (${error.problems.join('; ')}); recreate it with \`gleaner schedule create\``,
        );
      }
      await refuseFinished(db, planned.crawlId);
    },
  });
  return { crawlId, handle: client.workflow.getHandle(workflowId), workflowId, resumed: false };
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
  return { crawlId, handle, workflowId, resumed: true };
}
