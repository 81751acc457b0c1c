/**
 * `gleaner schedule create|list|describe|pause|unpause|trigger|delete`: recrawls on Temporal
 * Schedules. `create` takes every option of `gleaner crawl` that shapes the crawl (they are copied
 * from that command, and the spec is built from them by the same cli/crawl-flags.ts), so a
 * scheduled crawl is exactly the crawl the same flags would start by hand.
 *
 * On the embedded default every subcommand works without `gleaner dev`: it brings up the embedded
 * Temporal with its state under GLEANER_HOME for the moment it needs it (schedules live there),
 * and `trigger` runs the crawl's workers here and follows it to its end, as `gleaner crawl` does.
 */
import { randomBytes } from 'node:crypto';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { InvalidCrawlSpecError } from '../domain/crawl-spec';
import {
  buildScheduleRequest,
  InvalidScheduleError,
  OVERLAP_NAMES,
  type OverlapName,
  parseDurationMs,
} from '../domain/schedule-spec';
import { QUEUE_KINDS } from '../domain/temporal-names';
import {
  type CreateScheduleRequest,
  createCrawlSchedule,
  deleteCrawlSchedule,
  describeCrawlSchedule,
  listCrawlSchedules,
  pauseCrawlSchedule,
  type ScheduleDetails,
  ScheduleExists,
  ScheduleNotFound,
  TriggerSkipped,
  unpauseCrawlSchedule,
} from '../infra/crawl-schedules';
import { gleanerHome } from '../infra/gleaner-home';
import type { Runtime, RuntimeOptions } from '../infra/runtime';
import { CrawlIdTakenError, startCrawl } from '../infra/start-crawl';
import { type CrawlFlags, scheduledSpecFromFlags, usageErrorOf } from './crawl-flags';
import { CrawlFailedError, UsageError } from './errors';
import { inProcessWorkers } from './local-workers';

/** Options of `gleaner crawl` about this process or one crawl's identity, not the crawl spec. */
const NOT_SPEC_OPTIONS = new Set(['--wait', '--json', '--local-workers', '--no-local-workers', '--crawl-id']);

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
      withRuntime({}, async (runtime) => {
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
      withRuntime({}, async (runtime) => {
        await unpauseCrawlSchedule(runtime.client, id, options.note);
        const details = await describeCrawlSchedule(runtime.client, id);
        process.stderr.write(`schedule ${id} unpaused; ${whenItFires(runtime, details)}\n`);
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
    .option(
      '--wait',
      'block until the crawl finishes, showing progress (always so on the embedded default: its workers run here)',
    )
    .option('--json', 'print JSON: the crawl summary with --wait, else the started crawl id')
    .option('--local-workers', 'run workers in this process even with TEMPORAL_ADDRESS set')
    .option('--no-local-workers', 'do not run workers in this process (they run elsewhere)')
    .action(async (id: string, options: TriggerOptions) => runTrigger(id, options));

  schedule
    .command('delete')
    .description('delete a schedule (crawls it started are kept)')
    .argument('<id>')
    .action(async (id: string) =>
      withRuntime({}, async (runtime) => {
        await deleteCrawlSchedule(runtime.client, id);
        process.stderr.write(`schedule ${id} deleted\n`);
      }),
    );
}

interface CreateOptions extends CrawlFlags {
  json?: boolean;
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
  localWorkers?: boolean;
}

/** Problems with the user's input become one-line usage errors (exit 2). */
function asUsage(error: unknown): never {
  if (error instanceof InvalidCrawlSpecError) throw usageErrorOf(error);
  if (
    error instanceof InvalidScheduleError ||
    error instanceof ScheduleNotFound ||
    error instanceof ScheduleExists ||
    error instanceof CrawlIdTakenError
  )
    throw new UsageError(error.message);
  if (error instanceof TriggerSkipped) throw new CrawlFailedError(error.message);
  throw error;
}

/**
 * Opens the runtime for one subcommand. On the embedded default with no `gleaner dev` running this
 * starts the embedded Temporal on its on-disk state (where the schedules are) and stops it after.
 */
async function withRuntime(
  options: Pick<RuntimeOptions, 'workers'>,
  body: (runtime: Runtime) => Promise<void>,
): Promise<void> {
  // Loaded here: the Temporal client and workers are not needed to register the command.
  const { openRuntime } = await import('../infra/runtime');
  const runtime = await openRuntime({ ui: false, ...options });
  try {
    await body(runtime).catch(asUsage);
  } finally {
    await runtime.close();
  }
}

/**
 * One line on when a schedule fires, said for where it lives: a schedule fires only while its
 * Temporal runs and some worker polls the crawl queues, which on the embedded default means while
 * `gleaner dev` (or another gleaner process with workers) runs against this GLEANER_HOME.
 */
export function whenItFires(runtime: Runtime, details: ScheduleDetails): string {
  const next = details.paused
    ? 'paused (no fire until `gleaner schedule unpause`)'
    : `next run ${details.nextRuns[0] ?? 'none'}`;
  const head = `${details.cadence}, ${next}`;
  if (!runtime.embedded.temporal)
    return `${head}; fires on Temporal at ${runtime.temporalAddress} while gleaner workers poll it`;
  const home = gleanerHome();
  const where = runtime.embedded.attached
    ? `on this \`gleaner dev\`, and later whenever \`gleaner dev\` or a gleaner worker runs against ${home}`
    : `only while \`gleaner dev\` or a gleaner worker runs against ${home}`;
  return `${head}; fires ${where}; \`gleaner schedule trigger ${details.scheduleId} --wait\` runs it now`;
}

async function runCreate(urls: string[], options: CreateOptions): Promise<void> {
  let request: CreateScheduleRequest;
  try {
    request = buildScheduleRequest(
      options,
      scheduledSpecFromFlags(urls, options),
      randomBytes(2).toString('hex'),
    );
  } catch (error) {
    asUsage(error);
  }
  await withRuntime({}, async (runtime) => {
    await createCrawlSchedule(runtime.client, request);
    const details = await describeCrawlSchedule(runtime.client, request.scheduleId);
    if (options.json) {
      process.stdout.write(`${JSON.stringify(details)}\n`);
      return;
    }
    process.stderr.write(`schedule ${details.scheduleId} created: ${whenItFires(runtime, details)}\n`);
    if (runtime.temporalUiUrl) {
      process.stderr.write(
        `see it in Temporal Web: ${runtime.temporalUiUrl}/namespaces/${runtime.namespace}/schedules/${encodeURIComponent(details.scheduleId)}\n`,
      );
    }
    process.stdout.write(`${details.scheduleId}\n`);
  });
}

async function runList(options: { json?: boolean }): Promise<void> {
  await withRuntime({}, async (runtime) => {
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

/**
 * On the embedded default with no `gleaner dev`, no other process can be running workers (it would
 * hold the store): a running crawl of a schedule fired while a short command had Temporal up, and
 * waits for a worker.
 */
function runningCrawlsWaitForWorkers(runtime: Runtime): boolean {
  return runtime.embedded.temporal && !runtime.embedded.attached;
}

async function runDescribe(id: string, options: { json?: boolean }): Promise<void> {
  await withRuntime({}, async (runtime) => {
    const details = await describeCrawlSchedule(runtime.client, id);
    process.stdout.write(options.json ? `${JSON.stringify(details)}\n` : formatDetails(details));
    const waiting = runningCrawlsWaitForWorkers(runtime) ? details.runningCrawls : [];
    for (const crawlId of waiting)
      process.stderr.write(
        `crawl ${crawlId} waits for a worker: \`gleaner resume ${crawlId}\` runs it now; ` +
          'scheduled crawls run by themselves while `gleaner dev` runs\n',
      );
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

/**
 * Starts the schedule's crawl now through the same startCrawl as `gleaner crawl`. Where this
 * process runs the workers (the embedded default without `gleaner dev`, or --local-workers) it
 * follows the crawl to its end like `gleaner crawl --wait`: same progress, summary and exit status.
 */
async function runTrigger(id: string, options: TriggerOptions): Promise<void> {
  const configured = Boolean(process.env.TEMPORAL_ADDRESS);
  const localWorkers = options.localWorkers ?? !configured;
  const { followCrawl } = await import('./crawl-command');
  await withRuntime({ workers: inProcessWorkers(localWorkers ? QUEUE_KINDS : []) }, async (runtime) => {
    const started = await startCrawl(runtime.client, runtime.db, {
      scheduleId: id,
      ...(options.overlap ? { overlap: options.overlap } : {}),
    }).catch((error: unknown) => {
      // The crawl in the way fired while no process ran workers: it ends only when something runs it.
      if (error instanceof TriggerSkipped && runningCrawlsWaitForWorkers(runtime)) {
        const waiting = error.runningCrawls.map((crawlId) => `\`gleaner resume ${crawlId}\``).join(' or ');
        if (waiting)
          throw new TriggerSkipped(`${error.message}; it waits for a worker: ${waiting} runs it now`);
      }
      throw error;
    });
    const ownsWorkers = Boolean(runtime.workers);
    const wait = options.wait === true || (ownsWorkers && !configured);
    if (!wait) {
      if (options.json)
        process.stdout.write(
          `${JSON.stringify({ crawlId: started.crawlId, workflowId: started.workflowId, status: 'started' })}\n`,
        );
      else
        process.stderr.write(
          `schedule ${id} started crawl ${started.crawlId} (workflow ${started.workflowId})\n`,
        );
      return;
    }
    if (!options.json) {
      process.stderr.write(`schedule ${id} started crawl ${started.crawlId}\n`);
      if (ownsWorkers && !configured && options.wait !== true)
        process.stderr.write(
          'note: the embedded default runs its workers in this process, so the crawl runs to the end here\n',
        );
    }
    await followCrawl(runtime, started.handle, started.crawlId, options.json === true);
  });
}
