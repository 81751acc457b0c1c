/**
 * Recrawl schedules as real Temporal Schedules (ScheduleClient): each one starts `crawlWorkflow`
 * on the crawl task queue with a fixed crawl spec. Used by `gleaner schedule` and the HTTP API,
 * so both create, show and steer schedules the same way, and `temporal schedule list` and
 * Temporal Web see exactly what gleaner made.
 */
import { randomUUID } from 'node:crypto';
import {
  type Client,
  encodeScheduleOverlapPolicy,
  ScheduleAlreadyRunning,
  type ScheduleDescription,
  ScheduleNotFoundError,
  type ScheduleSummary,
  WorkflowNotFoundError,
} from '@temporalio/client';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { msNumberToTs } from '@temporalio/common/lib/time';
import type { ScheduledCrawlSpec } from '../domain/crawl-request';
import {
  type Cadence,
  crawlIdOfWorkflowId,
  DEFAULT_CATCHUP_WINDOW_MS,
  DEFAULT_OVERLAP,
  InvalidScheduleError,
  MIN_CATCHUP_WINDOW_MS,
  nominalTimeSuffix,
  OVERLAP_POLICIES,
  type OverlapName,
  overlapName,
  type ScheduleRequest,
  scheduleWorkflowIdBase,
} from '../domain/schedule-spec';
import { CRAWL_WORKFLOW_START, WORKFLOW_TYPES } from '../domain/temporal-names';

export type { ScheduledCrawlSpec };

export class ScheduleNotFound extends Error {
  override readonly name = 'ScheduleNotFound';
  constructor(readonly scheduleId: string) {
    super(`no schedule with id ${scheduleId}`);
  }
}

export class ScheduleExists extends Error {
  override readonly name = 'ScheduleExists';
  constructor(readonly scheduleId: string) {
    super(`a schedule with id ${scheduleId} already exists`);
  }
}

/** The trigger was dropped by the overlap policy: a crawl of this schedule is still running. */
export class TriggerSkipped extends Error {
  override readonly name = 'TriggerSkipped';
  constructor(
    message: string,
    /** Crawl ids of the schedule's running crawls that made the trigger overlap. */
    readonly runningCrawls: readonly string[] = [],
  ) {
    super(message);
  }
}

export type CreateScheduleRequest = ScheduleRequest<ScheduledCrawlSpec>;

export interface ScheduledRun {
  crawlId: string;
  workflowId: string;
  scheduledAt: string;
  startedAt: string;
}

export interface ScheduleView {
  scheduleId: string;
  /** `every 1d` or `cron 0 3 * * *`. */
  cadence: string;
  every?: string;
  cron?: string;
  seeds: string[];
  paused: boolean;
  note?: string;
  nextRuns: string[];
  recentRuns: ScheduledRun[];
}

export interface ScheduleDetails extends ScheduleView {
  overlap: OverlapName;
  jitterMs: number;
  catchupWindowMs: number;
  runningCrawls: string[];
  actionsTaken: number;
  skippedOverlap: number;
  missedCatchupWindow: number;
  createdAt: string;
  crawl: ScheduledCrawlSpec;
}

/** Kept in the schedule's memo: Temporal turns a cron into calendars and lists no action args. */
interface ScheduleMemo {
  cadence: Cadence;
  seeds: string[];
}
const MEMO_KEY = 'gleaner';
/** Temporal sets this on every workflow a schedule starts. */
const SCHEDULED_BY_ID = defineSearchAttributeKey('TemporalScheduledById', SearchAttributeType.KEYWORD);

export async function createCrawlSchedule(client: Client, request: CreateScheduleRequest): Promise<void> {
  const catchupWindowMs = request.catchupWindowMs ?? DEFAULT_CATCHUP_WINDOW_MS;
  if (catchupWindowMs < MIN_CATCHUP_WINDOW_MS) {
    throw new InvalidScheduleError(`the catch-up window must be at least ${MIN_CATCHUP_WINDOW_MS / 1000}s`);
  }
  const { cadence } = request;
  const memo: ScheduleMemo = { cadence, seeds: request.crawl.seeds };
  await client.schedule
    .create({
      scheduleId: request.scheduleId,
      spec: {
        ...('every' in cadence
          ? { intervals: [{ every: cadence.everyMs }] }
          : { cronExpressions: [cadence.cron] }),
        ...(request.jitterMs ? { jitter: request.jitterMs } : {}),
      },
      action: {
        type: 'startWorkflow',
        workflowType: WORKFLOW_TYPES.crawl,
        ...CRAWL_WORKFLOW_START,
        workflowId: scheduleWorkflowIdBase(request.scheduleId),
        args: [request.crawl],
      },
      policies: {
        overlap: OVERLAP_POLICIES[request.overlap ?? DEFAULT_OVERLAP],
        catchupWindow: catchupWindowMs,
      },
      memo: { [MEMO_KEY]: memo },
      state: {
        paused: request.paused === true,
        ...(request.note ? { note: request.note } : {}),
      },
    })
    .catch((error: unknown) => {
      if (error instanceof ScheduleAlreadyRunning) throw new ScheduleExists(request.scheduleId);
      // The SDK turns the server's INVALID_ARGUMENT (a cron it cannot parse) into a TypeError.
      if (error instanceof TypeError)
        throw new InvalidScheduleError(`Temporal refused the schedule: ${error.message}`);
      throw error;
    });
}

/** Schedules whose action starts crawlWorkflow, made by gleaner or by hand. */
export async function listCrawlSchedules(client: Client): Promise<ScheduleView[]> {
  const views: ScheduleView[] = [];
  for await (const summary of client.schedule.list()) {
    if (summary.action?.workflowType !== WORKFLOW_TYPES.crawl) continue;
    views.push(summaryView(summary));
  }
  return views.sort((a, b) => a.scheduleId.localeCompare(b.scheduleId));
}

export async function describeCrawlSchedule(client: Client, scheduleId: string): Promise<ScheduleDetails> {
  const description = await describeOrThrow(client, scheduleId);
  const memo = readMemo(description.memo);
  const crawl = (description.action.args?.[0] ?? { seeds: [] }) as ScheduledCrawlSpec;
  return {
    ...baseView(scheduleId, memo, description, crawl.seeds ?? []),
    overlap: overlapName(description.policies.overlap),
    jitterMs: description.spec.jitter ?? 0,
    catchupWindowMs: description.policies.catchupWindow,
    runningCrawls: description.info.runningActions.map((action) =>
      crawlIdOfWorkflowId(action.workflow.workflowId),
    ),
    actionsTaken: description.info.numActionsTaken,
    skippedOverlap: description.info.numActionsSkippedOverlap,
    missedCatchupWindow: description.info.numActionsMissedCatchupWindow,
    createdAt: description.info.createdAt.toISOString(),
    crawl,
  };
}

export async function pauseCrawlSchedule(client: Client, scheduleId: string, note?: string): Promise<void> {
  await client.schedule
    .getHandle(scheduleId)
    .pause(note ?? 'paused with gleaner')
    .catch(notFound(scheduleId));
}

export async function unpauseCrawlSchedule(client: Client, scheduleId: string, note?: string): Promise<void> {
  await client.schedule
    .getHandle(scheduleId)
    .unpause(note ?? 'unpaused with gleaner')
    .catch(notFound(scheduleId));
}

export async function deleteCrawlSchedule(client: Client, scheduleId: string): Promise<void> {
  await client.schedule.getHandle(scheduleId).delete().catch(notFound(scheduleId));
}

export interface TriggeredCrawl {
  crawlId: string;
  workflowId: string;
}

/** The crawl a trigger is about to start: its id and the spec the schedule's action carries. */
export interface PlannedTrigger extends TriggeredCrawl {
  /** As stored in the schedule: gleaner's own schedules carry a validated spec, hand-made ones anything. */
  crawl: unknown;
}

/**
 * Starts one crawl now through the schedule (so it counts among the schedule's actions) and
 * returns the crawl it started. Exact, not a guess from "the newest action": the trigger names
 * its own nominal time, Temporal appends that time to the workflow id, so the crawl's id is
 * known before it starts. A scheduled fire in the same second would have the same id; then that
 * crawl is the answer to the trigger too.
 */
export async function triggerCrawlSchedule(
  client: Client,
  scheduleId: string,
  options: {
    overlap?: OverlapName;
    timeoutMs?: number;
    /** Runs with the crawl the trigger will start, before it is asked for; throw to refuse it. */
    check?: (planned: PlannedTrigger) => Promise<void>;
  } = {},
): Promise<TriggeredCrawl> {
  const before = await describeOrThrow(client, scheduleId);
  const overlap = options.overlap ? OVERLAP_POLICIES[options.overlap] : before.policies.overlap;
  const nominal = new Date(Math.floor(Date.now() / 1_000) * 1_000);
  const workflowId = `${scheduleWorkflowIdBase(scheduleId)}-${nominalTimeSuffix(nominal)}`;
  await options.check?.({
    crawlId: crawlIdOfWorkflowId(workflowId),
    workflowId,
    crawl: before.action.args?.[0],
  });
  // The SDK's trigger() has no field for the nominal time, so this is its request with one more.
  await client.workflowService
    .patchSchedule({
      namespace: client.options.namespace,
      scheduleId,
      patch: {
        triggerImmediately: {
          overlapPolicy: encodeScheduleOverlapPolicy(overlap ?? 'SKIP'),
          scheduledTime: msNumberToTs(nominal.getTime()),
        },
      },
      identity: client.options.identity,
      requestId: randomUUID(),
    })
    .catch((error: unknown) => {
      if ((error as { code?: number }).code === 5) throw new ScheduleNotFound(scheduleId);
      throw error;
    });

  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  const skippedBefore = before.info.numActionsSkippedOverlap;
  let skippedSeenAt: number | undefined;
  while (Date.now() < deadline) {
    if (await startedBySchedule(client, workflowId, scheduleId)) {
      return { crawlId: crawlIdOfWorkflowId(workflowId), workflowId };
    }
    const now = await describeOrThrow(client, scheduleId);
    if (now.info.numActionsSkippedOverlap > skippedBefore) {
      // A scheduled fire may have been skipped at the same moment; give ours a moment to show.
      skippedSeenAt ??= Date.now();
      if (Date.now() - skippedSeenAt > 2_000) {
        const running = now.info.runningActions.map((action) =>
          crawlIdOfWorkflowId(action.workflow.workflowId),
        );
        throw new TriggerSkipped(
          `trigger skipped by the schedule's overlap policy (${overlapName(overlap)}): crawl ${running.join(', ') || '(just finished)'} is still running; ` +
            'retry when it ends, or trigger with --overlap buffer-one to queue a crawl after it',
          running,
        );
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(
    `schedule ${scheduleId} did not start crawl ${crawlIdOfWorkflowId(workflowId)} within ${options.timeoutMs ?? 60_000} ms`,
  );
}

async function startedBySchedule(client: Client, workflowId: string, scheduleId: string): Promise<boolean> {
  try {
    const description = await client.workflow.getHandle(workflowId).describe();
    return description.typedSearchAttributes.get(SCHEDULED_BY_ID) === scheduleId;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}

async function describeOrThrow(client: Client, scheduleId: string): Promise<ScheduleDescription> {
  return client.schedule.getHandle(scheduleId).describe().catch(notFound(scheduleId));
}

function notFound(scheduleId: string) {
  return (error: unknown): never => {
    if (error instanceof ScheduleNotFoundError) throw new ScheduleNotFound(scheduleId);
    throw error;
  };
}

function readMemo(memo: Record<string, unknown> | undefined): ScheduleMemo | undefined {
  const value = memo?.[MEMO_KEY] as ScheduleMemo | undefined;
  return value && typeof value === 'object' && value.cadence ? value : undefined;
}

function cadenceOf(
  memo: ScheduleMemo | undefined,
  spec: ScheduleSummary['spec'],
): Pick<ScheduleView, 'cadence' | 'every' | 'cron'> {
  const cadence = memo?.cadence;
  if (cadence && 'every' in cadence) return { cadence: `every ${cadence.every}`, every: cadence.every };
  if (cadence && 'cron' in cadence) return { cadence: `cron ${cadence.cron}`, cron: cadence.cron };
  // Made by hand (temporal schedule create): say what Temporal says.
  const interval = spec?.intervals?.[0];
  if (interval) return { cadence: `every ${interval.every / 1000}s` };
  return { cadence: spec?.calendars?.length ? 'calendar' : 'none' };
}

function runs(results: ScheduleSummary['info']['recentActions']): ScheduledRun[] {
  return results.map((result) => ({
    crawlId: crawlIdOfWorkflowId(result.action.workflow.workflowId),
    workflowId: result.action.workflow.workflowId,
    scheduledAt: result.scheduledAt.toISOString(),
    startedAt: result.takenAt.toISOString(),
  }));
}

function baseView(
  scheduleId: string,
  memo: ScheduleMemo | undefined,
  schedule: Pick<ScheduleSummary, 'spec' | 'state' | 'info'>,
  seeds: string[],
): ScheduleView {
  return {
    scheduleId,
    ...cadenceOf(memo, schedule.spec),
    seeds,
    paused: schedule.state.paused,
    ...(schedule.state.note ? { note: schedule.state.note } : {}),
    nextRuns: schedule.info.nextActionTimes.map((time) => time.toISOString()),
    recentRuns: runs(schedule.info.recentActions),
  };
}

function summaryView(summary: ScheduleSummary): ScheduleView {
  const memo = readMemo(summary.memo);
  return baseView(summary.scheduleId, memo, summary, memo?.seeds ?? []);
}
