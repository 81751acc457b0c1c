/**
 * A running crawl's live progress from its workflow (the `progress` query), when Temporal is at
 * hand. Optional by design: the store already says what a crawl has done, so an absent or
 * unreachable Temporal becomes a note beside the stored figures, never a failed tool call.
 */
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import type { CrawlProgress } from '../domain/crawl-messages';
import { crawlWorkflowState } from '../infra/crawl-workflow-state';

/** Bound on each Temporal call: a tool answers promptly while Temporal is slow or down. */
export const TEMPORAL_DEADLINE_MS = 3_000;

export interface LiveProgress {
  workflowStatus?: string;
  progress?: CrawlProgress;
  /** Why there is no live progress, when there could have been. */
  note?: string;
}

export async function liveProgress(
  temporal: (() => Promise<Client>) | undefined,
  crawlId: string,
): Promise<LiveProgress | undefined> {
  if (!temporal) return undefined;
  try {
    const client = await withTimeout(temporal(), TEMPORAL_DEADLINE_MS);
    return await client.connection.withDeadline(Date.now() + TEMPORAL_DEADLINE_MS, async () => {
      const { workflowStatus, progress } = await crawlWorkflowState(client, crawlId);
      return progress ? { workflowStatus, progress } : { workflowStatus };
    });
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return { note: 'Temporal has no workflow for it' };
    return { note: `live progress unavailable: ${(error as Error).message.split('\n')[0]}` };
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Temporal did not answer within ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
