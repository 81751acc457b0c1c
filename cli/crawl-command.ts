/** `gleaner crawl <url...>`: validate, start `crawlWorkflow`, optionally wait with progress. */
import { setMaxListeners } from 'node:events';
import { Client, type WorkflowHandle } from '@temporalio/client';
import { QUEUE_KINDS } from '../domain/temporal-names';
import { gleanerHome } from '../infra/gleaner-home';
import { llmApiKeyFromEnv } from '../infra/llm-api-key';
import { LOG_FILE } from '../infra/logger';
import type { Runtime } from '../infra/runtime';
import { CrawlIdTakenError, startCrawl } from '../infra/start-crawl';
import { connectTemporal } from '../infra/temporal-connect';
import { type FailureGroup, failuresByReason, formatFailures } from '../report/crawl-report';
import { countFlaggedPages } from '../report/flagged-pages';
import { countPagesByType } from '../report/pages-by-type';
import type { CrawlSummary } from '../workflows/messages';
import { type CrawlFlags, specFromFlags } from './crawl-flags';
import { CrawlFailedError, InterruptedError, UsageError } from './errors';
import { inProcessWorkers } from './local-workers';
import { watchProgress } from './progress';

export interface CrawlCommandOptions extends CrawlFlags {
  llmModel?: string;
  /** Visible in `ps`: prefer `llmApiKeyFile` or GLEANER_LLM_API_KEY. */
  llmApiKey?: string;
  /** A file whose first line is the LLM endpoint's key (sets GLEANER_LLM_API_KEY_FILE). */
  llmApiKeyFile?: string;
  wait?: boolean;
  json?: boolean;
  localWorkers?: boolean;
}

export async function runCrawlCommand(urls: string[], options: CrawlCommandOptions): Promise<void> {
  const spec = specFromFlags(urls, options);
  applyLlmOptions(options);
  const configured = Boolean(process.env.TEMPORAL_ADDRESS);
  // With TEMPORAL_ADDRESS set the workers run elsewhere unless --local-workers asks for them here;
  // on the embedded default they run here unless --no-local-workers.
  const localWorkers = options.localWorkers ?? !configured;
  let runtime: Runtime | undefined;
  try {
    const { openRuntime } = await import('../infra/runtime');
    runtime = await openRuntime({ workers: inProcessWorkers(localWorkers ? QUEUE_KINDS : []) });
    const ownsWorkers = Boolean(runtime.workers);
    const wait = options.wait === true || (ownsWorkers && !configured);
    if (ownsWorkers && !configured && options.wait !== true && !options.json) {
      process.stderr.write(
        'note: the embedded default runs its workers in this process, so the crawl runs to the end here\n',
      );
    }
    const { handle, workflowId, resumed } = await startCrawl(runtime.client, runtime.db, {
      spec,
      resumeOpen: true,
    }).catch((error: unknown) => {
      if (error instanceof CrawlIdTakenError) throw new UsageError(error.message);
      throw error;
    });
    if (!options.json) {
      process.stderr.write(
        resumed
          ? `crawl ${spec.crawlId} is still open: resuming it where it stopped (its original settings apply)\n`
          : `crawl ${spec.crawlId} started (workflow ${workflowId})\n`,
      );
      if (LOG_FILE) process.stderr.write(`log file: ${LOG_FILE} (--verbose shows the logs here)\n`);
      if (runtime.temporalUiUrl) {
        process.stderr.write(
          `watch it in Temporal Web: ${runtime.temporalUiUrl}/namespaces/${runtime.namespace}/workflows/${encodeURIComponent(workflowId)}\n`,
        );
      }
    }
    if (!wait) {
      if (options.json)
        process.stdout.write(
          `${JSON.stringify({ crawlId: spec.crawlId, workflowId, status: resumed ? 'resumed' : 'started' })}\n`,
        );
      return;
    }
    await followCrawl(runtime, handle, spec.crawlId, options.json === true);
  } finally {
    await runtime?.close();
  }
}

/**
 * Waits for a crawl with live progress, prints its summary, and turns Ctrl-C into a clean stop
 * that says how to continue. Shared by `gleaner crawl --wait` and `gleaner resume`.
 */
export async function followCrawl(
  runtime: Runtime,
  handle: WorkflowHandle,
  crawlId: string,
  json: boolean,
): Promise<void> {
  // Cancels the result long-poll and progress queries before the runtime closes the connection
  // and stops an embedded Temporal: a call still open then would fail as UNAVAILABLE, and the
  // client's retry would fire on the closed channel and throw outside any promise.
  const calls = new AbortController();
  // Every progress query and the result long-poll listen on this one signal: one per live origin.
  setMaxListeners(0, calls.signal);
  const client = runtime.client;
  // Progress queries go over their own connection without the SDK's retry interceptor: a failed poll
  // is simply skipped, and no retry timer (which an abort does not clear) can fire on a closed channel.
  const progressConnection = json
    ? undefined
    : await connectTemporal(runtime.temporalAddress, runtime.temporalConnectionOptions, { interceptors: [] });
  const progressClient = progressConnection
    ? new Client({ connection: progressConnection, namespace: runtime.namespace })
    : client;
  const stopWatching = watchProgress(progressClient, crawlId, { quiet: json, signal: calls.signal });
  let summary: CrawlSummary;
  try {
    const outcome = await Promise.race([
      client
        .withAbortSignal(calls.signal, () => handle.result())
        .then((result) => ({ summary: result as CrawlSummary })),
      interrupted().then((signal) => ({ signal })),
    ]);
    if ('signal' in outcome) {
      throw new InterruptedError(
        `interrupted (${outcome.signal}); crawl ${crawlId} is saved: \`gleaner resume ${crawlId}\` ` +
          `(or the same \`gleaner crawl --crawl-id ${crawlId} …\`) continues it, \`gleaner status ${crawlId}\` shows where it is`,
      );
    }
    summary = outcome.summary;
  } finally {
    stopWatching();
    calls.abort();
    await progressConnection?.close();
  }
  // Failures by reason with sample URLs come from the fetch log, not the workflow (history stays small).
  const failures = await failuresByReason(runtime.db, crawlId).catch(() => []);
  const pagesByType = await countPagesByType(runtime.db, crawlId).catch(() => undefined);
  const pagesFlagged = await countFlaggedPages(runtime.db, crawlId).catch(() => undefined);
  printSummary(
    { ...summary, ...(pagesByType ? { pagesByType } : {}), ...(pagesFlagged ? { pagesFlagged } : {}) },
    failures,
    json,
  );
  if (!json && runtime.embedded.database && !runtime.embedded.attached) {
    process.stdout.write(
      `  stored in ${gleanerHome()}/pgdata; run \`npx gleaner dev\` for a psql URL and Temporal Web, or see the README's SQL examples\n`,
    );
  }
  if (summary.status === 'failed')
    throw new CrawlFailedError(`crawl ${crawlId} failed: ${summary.failureReason}`);
}

/** Ctrl-C or SIGTERM while waiting: stop cleanly (workers, Temporal, the store) instead of dying. */
export function interrupted(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => resolve(signal));
  });
}

export function printSummary(summary: CrawlSummary, failures: FailureGroup[], json: boolean): void {
  if (json) {
    process.stdout.write(`${JSON.stringify({ ...summary, failures })}\n`);
    return;
  }
  const seconds = (summary.durationMs / 1000).toFixed(1);
  process.stdout.write(
    [
      `crawl ${summary.crawlId} ${summary.status} in ${seconds}s`,
      `  pages fetched   ${summary.pagesFetched}`,
      `  pages indexed   ${summary.pagesIndexed}`,
      ...(summary.pagesByType && Object.keys(summary.pagesByType).some((type) => type !== 'html')
        ? [
            `  pages by type   ${Object.entries(summary.pagesByType)
              .map(([type, count]) => `${type} ${count}`)
              .join(', ')}`,
          ]
        : []),
      ...(summary.pagesFlagged && Object.keys(summary.pagesFlagged).length > 0
        ? [
            `  pages flagged   ${Object.entries(summary.pagesFlagged)
              .map(([flag, count]) => `${flag} ${count}`)
              .join(', ')} (left out of search; --include-flagged shows them)`,
          ]
        : []),
      ...(summary.pagesRendered > 0 ? [`  pages rendered  ${summary.pagesRendered}`] : []),
      `  links           ${summary.links}`,
      `  errors          ${summary.errors}`,
      `  robots-blocked  ${summary.robotsBlocked}`,
      ...(summary.unreachable ? [`  unreachable     ${summary.unreachable}`] : []),
      `  origins         ${summary.origins}`,
      `  changes         ${summary.pagesNew ?? 0} new, ${summary.pagesChanged ?? 0} changed, ${summary.pagesUnchanged ?? 0} unchanged, ${summary.pagesRemoved ?? 0} removed, ${summary.pagesDuplicate ?? 0} duplicate`,
      `  chunks embedded ${summary.chunksEmbedded ?? 0}`,
      ...(summary.droppedByBudget > 0 ? [`  left by --max-pages ${summary.droppedByBudget}`] : []),
      ...formatFailures(failures),
      '',
    ].join('\n'),
  );
}

/**
 * `--llm-url/--llm-model/--llm-api-key-file` configure this process's `gleaner-llm` workers the way the
 * environment does for separate workers (the key never enters the crawl spec or workflow history).
 */
function applyLlmOptions(options: CrawlCommandOptions): void {
  if (options.llmUrl !== undefined) {
    let url: URL;
    try {
      url = new URL(options.llmUrl);
    } catch {
      throw new UsageError(`--llm-url must be an http(s) URL, got "${options.llmUrl}"`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new UsageError(`--llm-url must be an http(s) URL, got "${options.llmUrl}"`);
    process.env.GLEANER_LLM_URL = options.llmUrl;
  }
  if (options.llmModel !== undefined) process.env.GLEANER_LLM_MODEL = options.llmModel;
  if (options.llmApiKeyFile !== undefined) {
    process.env.GLEANER_LLM_API_KEY_FILE = options.llmApiKeyFile;
    // Read now, so a wrong path is a usage error before the crawl starts.
    try {
      llmApiKeyFromEnv({ GLEANER_LLM_API_KEY_FILE: options.llmApiKeyFile });
    } catch (error) {
      throw new UsageError(`--llm-api-key-file: ${(error as Error).message}`);
    }
  }
  if (options.llmApiKey !== undefined) {
    process.stderr.write(
      'warning: --llm-api-key is visible to every user of this machine (ps, /proc); use --llm-api-key-file PATH or GLEANER_LLM_API_KEY instead\n',
    );
    process.env.GLEANER_LLM_API_KEY = options.llmApiKey;
  }
}
