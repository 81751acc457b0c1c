/**
 * `gleaner schedule create|list|describe|pause|unpause|trigger|delete`: recrawls on Temporal
 * Schedules. `create` takes every option of `gleaner crawl` that shapes the crawl (they are copied
 * from that command, and the spec is built by the same `buildSpec`), so a scheduled crawl is
 * exactly the crawl the same flags would start by hand.
 */
import { randomBytes } from 'node:crypto';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { readLock } from '../db/pglite-database';
import { InvalidCrawlSpecError } from '../domain/crawl-spec';
import {
  checkScheduleId,
  defaultScheduleId,
  InvalidScheduleError,
  OVERLAP_NAMES,
  type OverlapName,
  parseCadence,
  parseDurationMs,
} from '../domain/schedule-spec';
import {
  createCrawlSchedule,
  deleteCrawlSchedule,
  describeCrawlSchedule,
  listCrawlSchedules,
  pauseCrawlSchedule,
  type ScheduleDetails,
  type ScheduledCrawlSpec,
  triggerCrawlSchedule,
  unpauseCrawlSchedule,
} from '../infra/crawl-schedules';
import { gleanerHome } from '../infra/gleaner-home';
import type { Runtime } from '../infra/runtime';
import type { CrawlSummary } from '../workflows/messages';
import { buildSpec, type CrawlCommandOptions, interrupted, printSummary } from './crawl-command';
import { failuresByReason } from './crawl-report';
import { CrawlFailedError, InterruptedError, UsageError } from './errors';
import { watchProgress } from './progress';

/** Options of `gleaner crawl` about this process or one crawl's identity, not the crawl spec. */
const NOT_SPEC_OPTIONS = new Set(['--wait', '--json', '--no-local-workers', '--crawl-id']);

function durationOption(flag: string) {
  return (value: string): string => {
    try {
      parseDurationMs(value, flag);
    } catch (error) {
      throw new InvalidArgumentError((error as Error).message);
    }
    return value;
  };
}

export function registerScheduleCommand(program: Command): void {
  const crawl = program.commands.find((command) => command.name() === 'crawl');
  if (!crawl) throw new Error('the crawl command must be registered before schedule');
  const schedule = program
    .command('schedule')
    .description('recrawl on Temporal Schedules: create, list, describe, pause, unpause, trigger, delete');

  const create = schedule
    .command('create')
    .description(
      'create a Temporal Schedule that starts this crawl (every option of `gleaner crawl` applies)',
    )
    .argument('<url...>', 'seed URLs (http or https)')
    .option('--every <duration>', 'fire at this interval: 30s, 15m, 6h, 1d, 1h30m (at least 1s)')
    .option('--cron <expr>', 'fire on a cron expression, e.g. "0 3 * * *" or @daily (UTC)')
    .option('--id <id>', 'schedule id (default: the first seed host and a short random tail)')
    .addOption(
      new Option('--overlap <policy>', `when the previous crawl still runs (default skip)`).choices(
        OVERLAP_NAMES,
      ),
    )
    .option(
      '--jitter <duration>',
      'delay each fire by a random time up to this (default 0)',
      durationOption('--jitter'),
    )
    .option(
      '--catchup-window <duration>',
      'a fire missed while Temporal was down still runs if it is back within this (default 1h, at least 10s)',
      durationOption('--catchup-window'),
    )
    .option('--paused', 'create it paused')
    .option('--note <text>', 'a note shown with the schedule');
  for (const option of crawl.options) {
    if (!NOT_SPEC_OPTIONS.has(option.long ?? '')) create.addOption(option);
  }
  create
    .option('--json', 'print the schedule as JSON')
    .action(async (urls: string[], options: CreateOptions) => runCreate(urls, options));

  schedule
    .command('list')
    .description('list schedules that start crawls')
    .option('--json', 'print one JSON document')
    .action(async (options: { json?: boolean }) => runList(options));

  schedule
    .command('describe')
    .description('show a schedule: cadence, policies, the crawl it starts, recent and next runs')
    .argument('<id>')
    .option('--json', 'print JSON')
    .action(async (id: string, options: { json?: boolean }) => runDescribe(id, options));

  schedule
    .command('pause')
    .description('stop a schedule from firing until unpaused (a running crawl goes on)')
    .argument('<id>')
    .option('--note <text>', 'why (shown by describe and in Temporal Web)')
    .action(async (id: string, options: { note?: string }) =>
      withClient(false, async (runtime) => {
        await pauseCrawlSchedule(runtime.client, id, options.note);
        process.stderr.write(`schedule ${id} paused\n`);
      }),
    );

  schedule
    .command('unpause')
    .description('let a paused schedule fire again')
    .argument('<id>')
    .option('--note <text>', 'why (shown by describe and in Temporal Web)')
    .action(async (id: string, options: { note?: string }) =>
      withClient(true, async (runtime) => {
        await unpauseCrawlSchedule(runtime.client, id, options.note);
        process.stderr.write(`schedule ${id} unpaused\n`);
      }),
    );

  schedule
    .command('trigger')
    .description("start the schedule's crawl now (also when paused)")
    .argument('<id>')
    .addOption(
      new Option(
        '--overlap <policy>',
        "when a crawl of it still runs (default: the schedule's policy)",
      ).choices(OVERLAP_NAMES),
    )
    .option('--wait', 'block until the crawl finishes, showing progress')
    .option('--json', 'print JSON: the crawl summary with --wait, else the started crawl id')
    .action(async (id: string, options: TriggerOptions) => runTrigger(id, options));

  schedule
    .command('delete')
    .description('delete a schedule (crawls it started are kept)')
    .argument('<id>')
    .action(async (id: string) =>
      withClient(false, async (runtime) => {
        await deleteCrawlSchedule(runtime.client, id);
        process.stderr.write(`schedule ${id} deleted\n`);
      }),
    );
}

interface CreateOptions extends CrawlCommandOptions {
  every?: string;
  cron?: string;
  id?: string;
  overlap?: OverlapName;
  jitter?: string;
  catchupWindow?: string;
  paused?: boolean;
  note?: string;
}

interface TriggerOptions {
  overlap?: OverlapName;
  wait?: boolean;
  json?: boolean;
}

/** Problems with the user's input become one-line usage errors (exit 2). */
function asUsage(error: unknown): never {
  if (error instanceof InvalidScheduleError || error instanceof InvalidCrawlSpecError) {
    throw new UsageError(error.message);
  }
  const name = (error as Error).name;
  if (name === 'ScheduleNotFound' || name === 'ScheduleExists')
    throw new UsageError((error as Error).message);
  if (name === 'TriggerSkipped') throw new CrawlFailedError((error as Error).message);
  throw error;
}

/**
 * On the embedded default, schedules live in the dev server's state under GLEANER_HOME and fire
 * only while it runs with workers, which is what `gleaner dev` is for. Commands that make crawls
 * start (create, unpause, trigger) therefore need a running `gleaner dev`; the others may bring
 * the embedded Temporal up for a moment.
 */
function checkCanFire(): void {
  if (process.env.TEMPORAL_ADDRESS) return;
  const holder = readLock(`${gleanerHome()}/pgdata.lock`);
  if (holder?.serving && holder.temporalAddress) return;
  throw new UsageError(
    'schedules on the embedded default fire only while `gleaner dev` runs: start `npx gleaner dev` in another ' +
      'terminal first (or set TEMPORAL_ADDRESS to a Temporal cluster with gleaner workers)',
  );
}

async function withClient(fires: boolean, body: (runtime: Runtime) => Promise<void>): Promise<void> {
  if (fires) checkCanFire();
  // Loaded here: the Temporal client and workers are not needed to register the command.
  const { openRuntime } = await import('../infra/runtime');
  const runtime = await openRuntime({ ui: false });
  try {
    await body(runtime).catch(asUsage);
  } finally {
    await runtime.close();
  }
}

async function runCreate(urls: string[], options: CreateOptions): Promise<void> {
  let crawl: ScheduledCrawlSpec;
  let request: Parameters<typeof createCrawlSchedule>[1];
  try {
    const cadence = parseCadence(options);
    const { crawlId: _unused, ...spec } = buildSpec(urls, { ...options, crawlId: 'schedule-check' });
    crawl = spec;
    const scheduleId = checkScheduleId(
      options.id ?? defaultScheduleId(urls[0] ?? '', randomBytes(2).toString('hex')),
    );
    request = {
      scheduleId,
      cadence,
      crawl,
      ...(options.overlap ? { overlap: options.overlap } : {}),
      ...(options.jitter ? { jitterMs: parseDurationMs(options.jitter, '--jitter') } : {}),
      ...(options.catchupWindow
        ? { catchupWindowMs: parseDurationMs(options.catchupWindow, '--catchup-window') }
        : {}),
      ...(options.paused ? { paused: true } : {}),
      ...(options.note ? { note: options.note } : {}),
    };
  } catch (error) {
    asUsage(error);
  }
  await withClient(true, async (runtime) => {
    await createCrawlSchedule(runtime.client, request);
    const details = await describeCrawlSchedule(runtime.client, request.scheduleId);
    if (options.json) {
      process.stdout.write(`${JSON.stringify(details)}\n`);
      return;
    }
    process.stderr.write(
      `schedule ${details.scheduleId} created: ${details.cadence}, ${details.paused ? 'paused' : `next run ${details.nextRuns[0] ?? 'none'}`}\n`,
    );
    if (runtime.temporalUiUrl) {
      process.stderr.write(
        `see it in Temporal Web: ${runtime.temporalUiUrl}/namespaces/${runtime.namespace}/schedules/${encodeURIComponent(details.scheduleId)}\n`,
      );
    }
    process.stdout.write(`${details.scheduleId}\n`);
  });
}

async function runList(options: { json?: boolean }): Promise<void> {
  await withClient(false, async (runtime) => {
    const schedules = await listCrawlSchedules(runtime.client);
    if (options.json) {
      process.stdout.write(`${JSON.stringify({ schedules })}\n`);
      return;
    }
    if (schedules.length === 0) {
      process.stdout.write('no schedules (create one with `gleaner schedule create <url> --every 1d`)\n');
      return;
    }
    const rows = schedules.map((s) => [
      s.scheduleId,
      s.cadence,
      s.paused ? 'paused' : 'active',
      s.paused ? '-' : (s.nextRuns[0] ?? '-'),
      s.recentRuns.at(-1)?.crawlId ?? '-',
      s.seeds.join(' '),
    ]);
    const header = ['ID', 'CADENCE', 'STATE', 'NEXT RUN', 'LAST CRAWL', 'SEEDS'];
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
    for (const row of [header, ...rows]) {
      process.stdout.write(
        `${row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ')}\n`,
      );
    }
  });
}

async function runDescribe(id: string, options: { json?: boolean }): Promise<void> {
  await withClient(false, async (runtime) => {
    const details = await describeCrawlSchedule(runtime.client, id);
    process.stdout.write(options.json ? `${JSON.stringify(details)}\n` : formatDetails(details));
  });
}

function formatDetails(d: ScheduleDetails): string {
  return [
    `schedule ${d.scheduleId}: ${d.cadence}, ${d.paused ? 'PAUSED' : 'active'}${d.note ? ` (${d.note})` : ''}`,
    `  seeds            ${d.seeds.join(' ')}`,
    `  overlap          ${d.overlap}`,
    `  jitter           ${d.jitterMs / 1000}s`,
    `  catch-up window  ${d.catchupWindowMs / 1000}s`,
    `  runs taken       ${d.actionsTaken} (skipped as overlapping ${d.skippedOverlap}, missed ${d.missedCatchupWindow})`,
    `  running          ${d.runningCrawls.join(' ') || '-'}`,
    `  next runs        ${d.paused ? '-' : d.nextRuns.slice(0, 3).join(' ') || '-'}`,
    '  recent crawls',
    ...(d.recentRuns.length === 0
      ? ['    -']
      : d.recentRuns.map((run) => `    ${run.crawlId}  started ${run.startedAt}`)),
    `  crawl spec       ${JSON.stringify(d.crawl)}`,
    '',
  ].join('\n');
}

async function runTrigger(id: string, options: TriggerOptions): Promise<void> {
  await withClient(true, async (runtime) => {
    const started = await triggerCrawlSchedule(
      runtime.client,
      id,
      options.overlap ? { overlap: options.overlap } : {},
    );
    if (!options.wait) {
      if (options.json) process.stdout.write(`${JSON.stringify({ ...started, status: 'started' })}\n`);
      else
        process.stderr.write(
          `schedule ${id} started crawl ${started.crawlId} (workflow ${started.workflowId})\n`,
        );
      return;
    }
    if (!options.json) process.stderr.write(`schedule ${id} started crawl ${started.crawlId}\n`);
    const summary = await waitForSummary(runtime, started.crawlId, started.workflowId, options.json === true);
    const failures = await failuresByReason(runtime.db, started.crawlId).catch(() => []);
    printSummary(summary, failures, options.json === true);
    if (summary.status === 'failed') {
      throw new CrawlFailedError(`crawl ${started.crawlId} failed: ${summary.failureReason}`);
    }
  });
}

async function waitForSummary(
  runtime: Runtime,
  crawlId: string,
  workflowId: string,
  quiet: boolean,
): Promise<CrawlSummary> {
  // As in `gleaner crawl --wait`: calls still open when the runtime closes would fail noisily.
  const calls = new AbortController();
  const client = runtime.client;
  const stopWatching = watchProgress(client, crawlId, { quiet, signal: calls.signal });
  try {
    const outcome = await Promise.race([
      client
        .withAbortSignal(calls.signal, () => client.workflow.getHandle(workflowId).result())
        .then((result) => ({ summary: result as CrawlSummary })),
      interrupted().then((signal) => ({ signal })),
    ]);
    if ('signal' in outcome) {
      throw new InterruptedError(
        `interrupted (${outcome.signal}); crawl ${crawlId} goes on; \`gleaner status ${crawlId}\` shows where it is`,
      );
    }
    return outcome.summary;
  } finally {
    stopWatching();
    calls.abort();
  }
}
