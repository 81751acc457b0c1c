/**
 * What a long crawl test prints when its crawl has not finished in time: the state of each worker
 * process, which workflows are still open and what each waits on (the last events of its history,
 * pending activities with their attempts and last failure, pending children), and the crawl's own
 * progress. A bare "Test timed out" says nothing about which of a dozen moving parts stopped; this
 * says which one.
 *
 * One line per thing, the most telling last: CI shows only the tail of a failed run's output.
 */
import type { Client, WorkflowHandle } from '@temporalio/client';
import { type CrawlProgress, crawlProgressQuery, type OriginStats } from '../workflows/messages';
import type { WorkerFleet } from './worker-fleet';

const QUERY_TIMEOUT_MS = 10_000;
const MAX_OPEN_WORKFLOWS = 40;
const LAST_EVENTS = 4;
const STDERR_TAIL_CHARS = 400;
/** temporal.api.enums.v1's pending activity and workflow task states, by number. */
const ACTIVITY_STATES = [
  'unspecified',
  'scheduled',
  'started',
  'cancel requested',
  'paused',
  'pause requested',
];
const TASK_STATES = ['unspecified', 'scheduled', 'started'];

function within<T>(promise: Promise<T>, ms: number): Promise<T | string> {
  return Promise.race([
    promise,
    new Promise<string>((resolve) => setTimeout(() => resolve(`no answer in ${ms} ms`), ms).unref()),
  ]);
}

function failureText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A history event's kind, read from whichever `…EventAttributes` field it carries. */
function eventKind(event: Record<string, unknown>): string {
  const key = Object.keys(event).find((name) => name.endsWith('EventAttributes') && event[name]);
  return key ? key.replace(/EventAttributes$/, '') : String(event.eventType);
}

async function describeOpen(client: Client, workflowId: string, runId: string, type: string) {
  const handle = client.workflow.getHandle(workflowId, runId);
  const described = await within(handle.describe(), QUERY_TIMEOUT_MS);
  if (typeof described === 'string') return `${workflowId}: describe: ${described}`;
  const raw = described.raw;
  const parts = [`${workflowId} (${type}, ${described.historyLength} events)`];
  const task = raw.pendingWorkflowTask;
  if (task)
    parts.push(`workflow task ${TASK_STATES[Number(task.state)] ?? task.state} attempt ${task.attempt}`);
  for (const activity of raw.pendingActivities ?? []) {
    const failure = activity.lastFailure?.message ? `, last failure: ${activity.lastFailure.message}` : '';
    parts.push(
      `activity ${activity.activityType?.name} ${ACTIVITY_STATES[Number(activity.state)] ?? activity.state} attempt ${activity.attempt} on ${activity.lastWorkerIdentity ?? '-'}${failure}`,
    );
  }
  const children = (raw.pendingChildren ?? []).map((child) => child.workflowId);
  if (children.length > 0) parts.push(`${children.length} children open: ${children.slice(0, 4).join(', ')}`);
  const history = await within(handle.fetchHistory(), QUERY_TIMEOUT_MS).catch(failureText);
  if (typeof history === 'string') parts.push(`history: ${history}`);
  else {
    const events = (history.events ?? []) as unknown as Record<string, unknown>[];
    parts.push(`last events: ${events.slice(-LAST_EVENTS).map(eventKind).join(' > ')}`);
  }
  return parts.join('; ');
}

function statsText(stats: OriginStats): string {
  const { fetched, indexed, errors, lastError } = stats;
  return JSON.stringify({ fetched, indexed, errors, ...(lastError ? { lastError } : {}) });
}

function progressLines(progress: CrawlProgress | string): string[] {
  if (typeof progress === 'string') return [`crawl progress: ${progress}`];
  const origins = progress.origins;
  const busy = origins.filter((origin) => !origin.idle && !origin.done);
  return [
    `crawl progress: phase ${progress.phase}, budget left ${progress.pageBudgetLeft}, ${origins.length} origins ` +
      `(${origins.filter((o) => o.idle).length} idle, ${origins.filter((o) => o.done).length} done), ` +
      `totals ${statsText(progress.totals)}`,
    ...busy.map((origin) => `  not idle: ${origin.origin} ${statsText(origin.stats)}`),
  ];
}

export async function stallReport(
  client: Client,
  crawl: WorkflowHandle,
  fleet?: WorkerFleet,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const lines: string[] = [];
  if (fleet)
    for (const member of fleet.members)
      lines.push(
        `worker ${member.name}: ${member.polling ? 'polling' : 'not polling'}, ${member.restarts} restarts, ` +
          `exit ${member.child.exitCode ?? '-'} signal ${member.child.signalCode ?? '-'}, stderr tail: ` +
          JSON.stringify(member.stderrTail.slice(-STDERR_TAIL_CHARS)),
      );
  let open = 0;
  try {
    for await (const execution of client.workflow.list({ query: 'ExecutionStatus = "Running"' })) {
      if (++open > MAX_OPEN_WORKFLOWS) {
        lines.push(`open workflow: (more than ${MAX_OPEN_WORKFLOWS}, the rest left out)`);
        break;
      }
      lines.push(
        `open workflow: ${await describeOpen(client, execution.workflowId, execution.runId, execution.type)}`,
      );
    }
  } catch (error) {
    lines.push(`listing open workflows failed: ${failureText(error)}`);
  }
  lines.push(`test: ${JSON.stringify(extra)}`);
  const progress = await within(crawl.query(crawlProgressQuery), QUERY_TIMEOUT_MS).catch(failureText);
  lines.push(...progressLines(progress));
  return lines.join('\n');
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
