/** `gleaner crawl <url...>`: validate, start `crawlWorkflow`, optionally wait with progress. */
import { randomBytes } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { type CrawlSpec, type CrawlSpecInput, parseCrawlSpec } from '../domain/crawl-spec';
import { crawlWorkflowId, QUEUE_KINDS, TASK_QUEUES, WORKFLOW_TYPES } from '../domain/temporal-names';
import { canonicalizeUrl } from '../domain/url';
import { gleanerHome, openRuntime, type Runtime } from '../infra/runtime';
import type { CrawlSummary } from '../workflows/messages';
import { CrawlFailedError, InterruptedError, UsageError } from './errors';
import { watchProgress } from './progress';

export interface CrawlCommandOptions {
  maxPages?: number;
  maxDepth?: number;
  scope?: string;
  domain?: string[];
  includePrefix?: string[];
  exclude?: string[];
  delayMs?: number;
  maxRps?: number;
  perOriginConcurrency?: number;
  userAgent?: string;
  allowHost?: string[];
  maxBodyBytes?: number;
  llmUrl?: string;
  llmModel?: string;
  llmApiKey?: string;
  crawlId?: string;
  wait?: boolean;
  json?: boolean;
  localWorkers?: boolean;
}

export function newCrawlId(): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '-');
  return `${stamp}-${randomBytes(3).toString('hex')}`;
}

export function buildSpec(urls: string[], options: CrawlCommandOptions): CrawlSpec {
  for (const url of urls) {
    if (!canonicalizeUrl(url)) throw new UsageError(`not a valid http(s) URL: ${url}`);
  }
  const input: CrawlSpecInput = {
    crawlId: options.crawlId ?? newCrawlId(),
    seeds: urls,
    ...(options.maxPages !== undefined ? { maxPages: options.maxPages } : {}),
    ...(options.maxDepth !== undefined ? { maxDepth: options.maxDepth } : {}),
    ...(options.scope !== undefined ? { scope: options.scope as CrawlSpec['scope'] } : {}),
    ...(options.domain ? { domains: options.domain } : {}),
    ...(options.includePrefix ? { includePrefixes: options.includePrefix } : {}),
    ...(options.exclude ? { exclude: options.exclude } : {}),
    ...(options.delayMs !== undefined ? { delayMs: options.delayMs } : {}),
    ...(options.maxRps !== undefined ? { maxRequestsPerSecond: options.maxRps } : {}),
    ...(options.perOriginConcurrency !== undefined
      ? { perOriginConcurrency: options.perOriginConcurrency }
      : {}),
    ...(options.userAgent !== undefined ? { userAgent: options.userAgent } : {}),
    ...(options.allowHost ? { allowHosts: options.allowHost } : {}),
    ...(options.maxBodyBytes !== undefined ? { maxBodyBytes: options.maxBodyBytes } : {}),
    ...(options.llmUrl || process.env.GLEANER_LLM_URL ? { llmSummaries: true } : {}),
  };
  if (input.scope === 'domains' && (input.domains ?? []).length === 0) {
    throw new UsageError('--scope domains needs at least one --domain');
  }
  return parseCrawlSpec(input);
}

export async function runCrawlCommand(urls: string[], options: CrawlCommandOptions): Promise<void> {
  const spec = buildSpec(urls, options);
  applyLlmOptions(options);
  const configured = Boolean(process.env.TEMPORAL_ADDRESS);
  const localWorkers = options.localWorkers ?? !configured;
  let runtime: Runtime | undefined;
  try {
    runtime = await openRuntime({ workerQueues: localWorkers ? QUEUE_KINDS : [] });
    const ownsWorkers = Boolean(runtime.workers);
    const wait = options.wait === true || (ownsWorkers && !configured);
    if (ownsWorkers && !configured && options.wait !== true && !options.json) {
      process.stderr.write(
        'note: the embedded default runs its workers in this process, so the crawl runs to the end here\n',
      );
    }
    const workflowId = crawlWorkflowId(spec.crawlId);
    const handle = await runtime.client.workflow
      .start(WORKFLOW_TYPES.crawl, { taskQueue: TASK_QUEUES.crawl, workflowId, args: [spec] })
      .catch((error: unknown) => {
        if (error instanceof WorkflowExecutionAlreadyStartedError) {
          throw new UsageError(`a crawl with id ${spec.crawlId} already exists`);
        }
        throw error;
      });
    if (!options.json) {
      process.stderr.write(`crawl ${spec.crawlId} started (workflow ${workflowId})\n`);
      if (runtime.temporalUiUrl) {
        process.stderr.write(
          `watch it in Temporal Web: ${runtime.temporalUiUrl}/namespaces/${runtime.namespace}/workflows/${encodeURIComponent(workflowId)}\n`,
        );
      }
    }
    if (!wait) {
      if (options.json)
        process.stdout.write(`${JSON.stringify({ crawlId: spec.crawlId, workflowId, status: 'started' })}\n`);
      return;
    }
    // Cancels the result long-poll and progress queries before the runtime closes the connection
    // and stops an embedded Temporal: a call still open then would fail as UNAVAILABLE, and the
    // client's retry would fire on the closed channel and throw outside any promise.
    const calls = new AbortController();
    const client = runtime.client;
    const stopWatching = watchProgress(client, spec.crawlId, {
      quiet: options.json === true,
      signal: calls.signal,
    });
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
          `interrupted (${outcome.signal}); crawl ${spec.crawlId} is saved and resumes whenever workers run here again ` +
            '(`gleaner dev`, or the next `gleaner crawl`); `gleaner status ' +
            `${spec.crawlId}\` shows where it is`,
        );
      }
      summary = outcome.summary;
    } finally {
      stopWatching();
      calls.abort();
    }
    printSummary(summary, options.json === true);
    if (!options.json && runtime.embedded.database && !runtime.embedded.attached) {
      process.stdout.write(
        `  stored in ${gleanerHome()}/pgdata; run \`npx gleaner dev\` for a psql URL and Temporal Web, or see the README's SQL examples\n`,
      );
    }
    if (summary.status === 'failed')
      throw new CrawlFailedError(`crawl ${spec.crawlId} failed: ${summary.failureReason}`);
  } finally {
    await runtime?.close();
  }
}

/** Ctrl-C or SIGTERM while waiting: stop cleanly (workers, Temporal, the store) instead of dying. */
function interrupted(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => resolve(signal));
  });
}

function printSummary(summary: CrawlSummary, json: boolean): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    return;
  }
  const seconds = (summary.durationMs / 1000).toFixed(1);
  process.stdout.write(
    [
      `crawl ${summary.crawlId} ${summary.status} in ${seconds}s`,
      `  pages fetched   ${summary.pagesFetched}`,
      `  pages indexed   ${summary.pagesIndexed}`,
      `  links           ${summary.links}`,
      `  errors          ${summary.errors}`,
      `  robots-blocked  ${summary.robotsBlocked}`,
      `  origins         ${summary.origins}`,
      ...(summary.droppedByBudget > 0 ? [`  left by --max-pages ${summary.droppedByBudget}`] : []),
      '',
    ].join('\n'),
  );
}

/**
 * `--llm-url/--llm-model/--llm-api-key` configure this process's `gleaner-llm` workers the way the
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
  if (options.llmApiKey !== undefined) process.env.GLEANER_LLM_API_KEY = options.llmApiKey;
}
