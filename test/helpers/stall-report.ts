/**
 * What a long crawl test prints when its crawl has not finished in time: which workflows are still
 * open and what each waits on (pending activities with their attempts and last failure, pending
 * children), the crawl's own progress, and the state of each worker process. A bare "Test timed out"
 * says nothing about which of a dozen moving parts stopped; this says which one.
 */
import type { Client, WorkflowHandle } from '@temporalio/client';
import { crawlProgressQuery } from '../../workflows/messages';
import type { WorkerFleet } from './worker-fleet';

const QUERY_TIMEOUT_MS = 10_000;

function within<T>(promise: Promise<T>, ms: number): Promise<T | string> {
  return Promise.race([
    promise,
    new Promise<string>((resolve) => setTimeout(() => resolve(`no answer in ${ms} ms`), ms).unref()),
  ]);
}

function failureText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export async function stallReport(
  client: Client,
  crawl: WorkflowHandle,
  fleet?: WorkerFleet,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const report: Record<string, unknown> = { ...extra };
  report.crawlProgress = await within(crawl.query(crawlProgressQuery).catch(failureText), QUERY_TIMEOUT_MS);
  const open: unknown[] = [];
  try {
    for await (const execution of client.workflow.list({ query: 'ExecutionStatus = "Running"' })) {
      if (open.length >= 40) break;
      const handle = client.workflow.getHandle(execution.workflowId, execution.runId);
      const described = await within(handle.describe(), QUERY_TIMEOUT_MS);
      if (typeof described === 'string') {
        open.push({ workflowId: execution.workflowId, describe: described });
        continue;
      }
      const raw = described.raw;
      open.push({
        workflowId: execution.workflowId,
        type: execution.type,
        historyLength: described.historyLength,
        pendingActivities: (raw.pendingActivities ?? []).map((activity) => ({
          type: activity.activityType?.name,
          state: activity.state,
          attempt: activity.attempt,
          lastFailure: activity.lastFailure?.message,
          lastWorker: activity.lastWorkerIdentity,
        })),
        pendingChildren: (raw.pendingChildren ?? []).map((child) => child.workflowId),
        pendingWorkflowTask: raw.pendingWorkflowTask
          ? { state: raw.pendingWorkflowTask.state, attempt: raw.pendingWorkflowTask.attempt }
          : undefined,
      });
    }
  } catch (error) {
    open.push({ listFailed: failureText(error) });
  }
  report.openWorkflows = open;
  if (fleet)
    report.workers = fleet.members.map((member) => ({
      name: member.name,
      polling: member.polling,
      restarts: member.restarts,
      exitCode: member.child.exitCode,
      signal: member.child.signalCode,
      stderrTail: member.stderrTail.slice(-1_500),
    }));
  return JSON.stringify(report, null, 2);
}

/**
 * The crawl's result, or — if it has not come within `ms` — an error carrying the stall report, so the
 * test fails with what was stuck instead of running into the test timeout.
 */
export async function resultOrStallReport<T>(
  result: Promise<T>,
  ms: number,
  report: () => Promise<string>,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const stalled = new Promise<'stalled'>((resolve) => {
    timer = setTimeout(() => resolve('stalled'), ms);
  });
  const first = await Promise.race([result, stalled]);
  clearTimeout(timer);
  if (first !== 'stalled') return first as T;
  throw new Error(`the crawl did not finish in ${Math.round(ms / 1000)} s:\n${await report()}`);
}
