/**
 * Time spent inside each activity type of one crawl, from the histories of every workflow the crawl
 * ran (ACTIVITY_TASK_STARTED → its close event), with the crawl's history events and workflow tasks.
 * Used to apportion a worker process's CPU between the activity types it runs.
 */
import type { Client } from '@temporalio/client';

export interface ActivityTimes {
  executions: number;
  events: number;
  workflowTasks: number;
  /** Sum of started → closed wall ms per activity type (every attempt). */
  wallMs: Record<string, number>;
  attempts: Record<string, number>;
}

interface EventLike {
  eventId?: unknown;
  eventTime?: { seconds?: unknown; nanos?: number | null } | null;
  workflowTaskCompletedEventAttributes?: object | null;
  activityTaskScheduledEventAttributes?: { activityType?: { name?: string | null } | null } | null;
  activityTaskStartedEventAttributes?: { scheduledEventId?: unknown } | null;
  activityTaskCompletedEventAttributes?: { scheduledEventId?: unknown } | null;
  activityTaskFailedEventAttributes?: { scheduledEventId?: unknown } | null;
  activityTaskTimedOutEventAttributes?: { scheduledEventId?: unknown } | null;
}

const timeMs = (t: EventLike['eventTime']): number =>
  Number(t?.seconds ?? 0) * 1000 + Math.floor((t?.nanos ?? 0) / 1e6);

export async function activityTimes(client: Client, crawlWorkflowId: string): Promise<ActivityTimes> {
  const query = `WorkflowId = '${crawlWorkflowId}' OR WorkflowId STARTS_WITH '${crawlWorkflowId}/'`;
  // Visibility is eventually consistent: list until the count holds.
  let runs: Array<{ workflowId: string; runId: string }> = [];
  for (let attempt = 0; attempt < 20; attempt++) {
    const listed: typeof runs = [];
    for await (const info of client.workflow.list({ query }))
      listed.push({ workflowId: info.workflowId, runId: info.runId });
    const stable = listed.length === runs.length && listed.length > 0;
    runs = listed;
    if (stable) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const totals: ActivityTimes = {
    executions: runs.length,
    events: 0,
    workflowTasks: 0,
    wallMs: {},
    attempts: {},
  };
  const queue = [...runs];
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const history = await client.workflow.getHandle(next.workflowId, next.runId).fetchHistory();
        addHistory((history.events ?? []) as EventLike[], totals);
      }
    }),
  );
  return totals;
}

function addHistory(events: EventLike[], totals: ActivityTimes): void {
  totals.events += events.length;
  const typeOf = new Map<string, string>();
  const startedAt = new Map<string, number>();
  for (const event of events) {
    const at = timeMs(event.eventTime);
    if (event.workflowTaskCompletedEventAttributes) totals.workflowTasks++;
    else if (event.activityTaskScheduledEventAttributes) {
      typeOf.set(String(event.eventId), event.activityTaskScheduledEventAttributes.activityType?.name ?? '?');
    } else if (event.activityTaskStartedEventAttributes) {
      startedAt.set(String(event.activityTaskStartedEventAttributes.scheduledEventId), at);
    } else {
      const closed =
        event.activityTaskCompletedEventAttributes ??
        event.activityTaskFailedEventAttributes ??
        event.activityTaskTimedOutEventAttributes;
      if (!closed) continue;
      const scheduled = String(closed.scheduledEventId);
      const started = startedAt.get(scheduled);
      const type = typeOf.get(scheduled) ?? '?';
      if (started === undefined) continue;
      totals.wallMs[type] = (totals.wallMs[type] ?? 0) + (at - started);
      totals.attempts[type] = (totals.attempts[type] ?? 0) + 1;
    }
  }
}
