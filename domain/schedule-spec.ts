/**
 * Recrawl schedules: the rules shared by `gleaner schedule` and the HTTP API — schedule ids,
 * cadences (`--every` durations, `--cron` expressions), overlap policies, and the crawl ids of
 * the crawls a schedule starts. Pure: the Temporal calls live in infra/crawl-schedules.ts.
 *
 * A Temporal Schedule appends the action's nominal time (RFC 3339, whole seconds, UTC) to the
 * workflow id it starts with, and crawlWorkflow takes its crawl id from its workflow id when the
 * spec carries none. So the schedule's action starts workflow `crawl-<scheduleId>` without a
 * crawl id, and each fire becomes crawl `<scheduleId>-2026-11-24T03:00:00Z`: unique per fire,
 * readable, and `gleaner status <that id>` finds it like any other crawl.
 */
import { crawlWorkflowId } from './temporal-names';

export class InvalidScheduleError extends Error {
  override readonly name = 'InvalidScheduleError';
}

/** Ids become part of workflow and crawl ids, so they keep to the crawl id alphabet. */
export const SCHEDULE_ID_PATTERN = '^[A-Za-z0-9._-]{1,60}$';
const SCHEDULE_ID = new RegExp(SCHEDULE_ID_PATTERN);

/** Temporal refuses schedule intervals under one second ("interval is too small"). */
export const MIN_INTERVAL_MS = 1_000;
/** Temporal's own floor for a catch-up window. */
export const MIN_CATCHUP_WINDOW_MS = 10_000;
/**
 * A fire missed while Temporal was down still runs when it comes back within this window (once:
 * the skip policy drops the rest); after a longer outage the schedule waits for its next time.
 * @default 1 hour
 */
export const DEFAULT_CATCHUP_WINDOW_MS = 3_600_000;

/** What a running crawl does to the next fire (Temporal's overlap policies, in CLI spelling). */
export const OVERLAP_POLICIES = {
  skip: 'SKIP',
  'buffer-one': 'BUFFER_ONE',
  'buffer-all': 'BUFFER_ALL',
  'cancel-other': 'CANCEL_OTHER',
  'terminate-other': 'TERMINATE_OTHER',
  'allow-all': 'ALLOW_ALL',
} as const;
export type OverlapName = keyof typeof OVERLAP_POLICIES;
export type TemporalOverlapPolicy = (typeof OVERLAP_POLICIES)[OverlapName];
export const OVERLAP_NAMES = Object.keys(OVERLAP_POLICIES) as OverlapName[];
/** Two crawls of one site at once would double the load on it: a busy schedule skips a fire. */
export const DEFAULT_OVERLAP: OverlapName = 'skip';

export function overlapName(policy: string | undefined): OverlapName {
  const found = OVERLAP_NAMES.find((name) => OVERLAP_POLICIES[name] === policy);
  return found ?? DEFAULT_OVERLAP;
}

export function checkScheduleId(id: string): string {
  if (!SCHEDULE_ID.test(id)) {
    throw new InvalidScheduleError(`schedule id "${id}" must be 1 to 60 letters, digits, ".", "_" or "-"`);
  }
  return id;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * `90s`, `5m`, `1h30m`, `2d`, `1500ms`: one or more whole numbers with a unit. Plain numbers are
 * refused, so `--every 5` never means five milliseconds to one reader and five minutes to another.
 */
export function parseDurationMs(text: string, what = 'duration'): number {
  const trimmed = text.trim();
  if (!/^(\d+(ms|s|m|h|d))+$/.test(trimmed)) {
    throw new InvalidScheduleError(
      `${what} "${text}" is not a duration like 30s, 5m, 1h30m or 1d (units ms, s, m, h, d)`,
    );
  }
  let total = 0;
  for (const [, amount, unit] of trimmed.matchAll(/(\d+)(ms|s|m|h|d)/g)) {
    total += Number(amount) * (UNIT_MS[unit as string] ?? 0);
  }
  if (!Number.isSafeInteger(total)) throw new InvalidScheduleError(`${what} "${text}" is too long`);
  return total;
}

export function parseInterval(text: string, what = '--every'): number {
  const ms = parseDurationMs(text, what);
  if (ms < MIN_INTERVAL_MS) {
    throw new InvalidScheduleError(`${what} "${text}" is shorter than Temporal's minimum of 1s`);
  }
  if (ms % 1_000 !== 0) throw new InvalidScheduleError(`${what} "${text}" must be whole seconds`);
  return ms;
}

/**
 * A first check of a cron expression's shape, so an obvious typo fails before any connection;
 * Temporal parses it for real (5 fields, 6–7 with seconds or years, `@daily`-style shortcuts,
 * `CRON_TZ=`) and its message is passed on when it refuses one.
 */
export function checkCron(expression: string, what = '--cron'): string {
  const trimmed = expression.trim();
  const body = trimmed.replace(/^CRON_TZ=\S+\s+/, '');
  const fields = body.split(/\s+/).filter(Boolean);
  const shortcut = /^@\w+/.test(body);
  if (!shortcut && (fields.length < 5 || fields.length > 7)) {
    throw new InvalidScheduleError(
      `${what} "${expression}" needs 5 fields (minute hour day-of-month month day-of-week) or a shortcut like @daily`,
    );
  }
  if (!shortcut && !fields.every((field) => /^[A-Za-z0-9*?/,#L-]+$/.test(field))) {
    throw new InvalidScheduleError(`${what} "${expression}" has characters cron does not use`);
  }
  return trimmed;
}

/** How often a schedule fires, as the user wrote it (kept in the schedule's memo). */
export type Cadence = { every: string; everyMs: number } | { cron: string };

/** How a caller's users write a schedule field: `--every` on the command line, `every` in a body. */
export type ScheduleFieldName = (field: 'every' | 'cron' | 'jitter' | 'catchupWindow') => string;

const FLAG_NAMES: ScheduleFieldName = (field) =>
  ({ every: '--every', cron: '--cron', jitter: '--jitter', catchupWindow: '--catchup-window' })[field];

export function parseCadence(
  options: { every?: string; cron?: string },
  nameOf: ScheduleFieldName = FLAG_NAMES,
): Cadence {
  const every = nameOf('every');
  const cron = nameOf('cron');
  if (options.every !== undefined && options.cron !== undefined) {
    throw new InvalidScheduleError(`give either ${every} or ${cron}, not both`);
  }
  if (options.every !== undefined)
    return { every: options.every.trim(), everyMs: parseInterval(options.every, every) };
  if (options.cron !== undefined) return { cron: checkCron(options.cron, cron) };
  throw new InvalidScheduleError(
    `a schedule needs ${every} DURATION (e.g. 1d) or ${cron} EXPR (e.g. "0 3 * * *")`,
  );
}

export function describeCadence(cadence: Cadence): string {
  return 'every' in cadence ? `every ${cadence.every}` : `cron ${cadence.cron}`;
}

/** The workflow id a schedule's action names; Temporal appends `-<nominal time>` per fire. */
export function scheduleWorkflowIdBase(scheduleId: string): string {
  return crawlWorkflowId(scheduleId);
}

/** Temporal's suffix: the nominal time in RFC 3339, truncated to whole seconds, in UTC. */
export function nominalTimeSuffix(nominal: Date): string {
  return new Date(Math.floor(nominal.getTime() / 1_000) * 1_000).toISOString().replace('.000Z', 'Z');
}

/** The crawl id of the crawl a schedule starts for this nominal time. */
export function scheduledCrawlId(scheduleId: string, nominal: Date): string {
  return `${scheduleId}-${nominalTimeSuffix(nominal)}`;
}

/** The crawl id inside a crawl workflow id (`crawl-<crawlId>`), as crawlWorkflow derives it. */
export function crawlIdOfWorkflowId(workflowId: string): string {
  return workflowId.replace(/^crawl-/, '');
}

/** A readable default id: the first seed's host and a short random tail. */
export function defaultScheduleId(firstSeed: string, randomHex: string): string {
  let host = 'crawl';
  try {
    host = new URL(firstSeed).host.replace(/[^A-Za-z0-9._-]/g, '-');
  } catch {
    // The seed is validated elsewhere; an unparsable one just gets the generic prefix.
  }
  return `${host.slice(0, 50)}-${randomHex}`;
}

/** What `gleaner schedule create` and `POST /schedules` ask for besides the crawl, in the API's names. */
export interface ScheduleRequestInput {
  id?: string;
  every?: string;
  cron?: string;
  overlap?: OverlapName;
  jitter?: string;
  catchupWindow?: string;
  paused?: boolean;
  note?: string;
}

/** A schedule to create: its id, cadence and policies, and the crawl spec each fire starts. */
export interface ScheduleRequest<Crawl extends { seeds: string[] }> {
  scheduleId: string;
  cadence: Cadence;
  crawl: Crawl;
  /** @default 'skip' */
  overlap?: OverlapName;
  /** Random delay added to each fire, up to this much. @default 0 */
  jitterMs?: number;
  /** @default DEFAULT_CATCHUP_WINDOW_MS */
  catchupWindowMs?: number;
  /** Created paused (no fire until unpaused). @default false */
  paused?: boolean;
  note?: string;
}

/**
 * The one builder of a schedule request, for the CLI and the API alike. `nameOf` words a field
 * the way its caller's users write it (`--jitter` on the command line, `jitter` in a body);
 * `randomHex` makes the default id's tail.
 */
export function buildScheduleRequest<Crawl extends { seeds: string[] }>(
  input: ScheduleRequestInput,
  crawl: Crawl,
  randomHex: string,
  nameOf: ScheduleFieldName = FLAG_NAMES,
): ScheduleRequest<Crawl> {
  const cadence = parseCadence(input, nameOf);
  const scheduleId = checkScheduleId(input.id ?? defaultScheduleId(crawl.seeds[0] ?? '', randomHex));
  const catchupWindowMs =
    input.catchupWindow !== undefined
      ? parseDurationMs(input.catchupWindow, nameOf('catchupWindow'))
      : undefined;
  if (catchupWindowMs !== undefined && catchupWindowMs < MIN_CATCHUP_WINDOW_MS) {
    throw new InvalidScheduleError(`the catch-up window must be at least ${MIN_CATCHUP_WINDOW_MS / 1000}s`);
  }
  return {
    scheduleId,
    cadence,
    crawl,
    ...(input.overlap ? { overlap: input.overlap } : {}),
    ...(input.jitter !== undefined ? { jitterMs: parseDurationMs(input.jitter, nameOf('jitter')) } : {}),
    ...(catchupWindowMs !== undefined ? { catchupWindowMs } : {}),
    ...(input.paused ? { paused: true } : {}),
    ...(input.note ? { note: input.note } : {}),
  };
}
