/**
 * Starts one Temporal worker per requested task queue in this process. Every worker can run
 * every activity (they are cheap to register); which queue it polls decides what it does.
 */

import { DefaultLogger, type LogLevel, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { createActivities } from '../activities';
import { ensureEmbeddingModel } from '../activities/embed-chunks';
import { closeOriginConnections } from '../activities/http/origin-connections';
import {
  closePageAnalysisPool,
  reserveCoreForMainThread,
  warmFetchedHtmlPool,
  warmPageAnalysisPool,
} from '../activities/page-analysis-pool';
import { closeRenderPool, configureRenderPool } from '../activities/render/render-and-store';
import type { Database } from '../db/database';
import { isConnectionError } from '../db/pg-database';
import { vectorIndexMinChunks } from '../db/vector-index';
import {
  CRAWL_COORDINATOR_QUEUE,
  type QueueKind,
  TASK_QUEUES,
  WORKFLOW_TASK_TIMEOUT,
} from '../domain/temporal-names';
import { closeSharedEmbedderThread, sharedEmbedderThread } from '../embed/embedder-thread';
import { logger } from '../infra/logger';
import { startMemorySampler } from '../infra/memory-sampler';
import type { TemporalConnectionOptions } from '../infra/temporal-connection-options';
import { limitHeapGrowth } from './heap-growth';
import { workflowBundle } from './workflow-bundle';

export { WORKFLOWS_PATH, workflowBundle } from './workflow-bundle';

/** The longest a worker holds an activity's heartbeat before sending it (the SDK's default: 0.8 x its timeout). */
const HEARTBEAT_THROTTLE = '5 seconds';

/** The embed worker could not start: the model is missing or differs from the corpus's. */
export class EmbeddingSetupError extends Error {
  override readonly name = 'EmbeddingSetupError';
}

/**
 * Loads the embedding model and checks it against the one the corpus records before an embed
 * worker polls, so a missing or different model stops the worker at start with one clear message
 * instead of failing every page later.
 */
async function prepareEmbedding(db: Database): Promise<void> {
  try {
    vectorIndexMinChunks();
    const embedder = await sharedEmbedderThread();
    await ensureEmbeddingModel(db, embedder.identity);
  } catch (error) {
    if (error instanceof Error && (error.name === 'DatabaseUnavailableError' || isConnectionError(error)))
      throw error;
    throw new EmbeddingSetupError(`cannot start the embed worker: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

let runtimeInstalled = false;
/** Routes the SDK's own logs into pino; must run before the first connection or worker. */
export function installTemporalRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const sdkLog = logger.child({ component: 'temporal-sdk' });
  const level = (process.env.GLEANER_SDK_LOG_LEVEL ?? 'WARN') as LogLevel;
  Runtime.install({
    logger: new DefaultLogger(level, (entry) => {
      const { message, meta } = entry;
      // Workers for the activity queues carry no workflows by design; the SDK warns about it once each.
      if (message.startsWith('No workflows registered')) return;
      // Task tokens are opaque binary blobs that only bloat the line.
      const { taskToken: _token, ...fields } = (meta ?? {}) as Record<string, unknown>;
      if (entry.level === 'ERROR') sdkLog.error(fields, message);
      else if (entry.level === 'WARN') sdkLog.warn(fields, message);
      else if (entry.level === 'INFO') sdkLog.info(fields, message);
      else sdkLog.debug(fields, message);
    }),
    // The Rust core prints its own warnings (e.g. slow workflow tasks) straight to stderr unless
    // forwarded; forwarded, they land in the same pino log as everything else.
    telemetryOptions: { logging: { filter: { core: level, other: level }, forward: {} } },
  });
}

export interface StartWorkersOptions {
  temporalAddress: string;
  /** TLS and API key for TEMPORAL_ADDRESS's cluster (infra/temporal-connection-options). @default none: plaintext */
  temporalConnectionOptions?: TemporalConnectionOptions;
  namespace: string;
  queues: readonly QueueKind[];
  db: Database;
  /** Concurrent fetches across all origins this process serves. @default 64 */
  maxConcurrentFetches?: number;
}

export interface RunningWorkers {
  /** Resolves when every worker has stopped; rejects if one fails. */
  done: Promise<void>;
  shutdown(): Promise<void>;
}

export async function startWorkers(options: StartWorkersOptions): Promise<RunningWorkers> {
  installTemporalRuntime();
  limitHeapGrowth();
  startMemorySampler();
  if (options.queues.includes('embed')) await prepareEmbedding(options.db);
  // One process holding the embedded store runs the whole pipeline on its main thread too.
  if (options.db.kind === 'pglite' && options.queues.includes('page')) reserveCoreForMainThread();
  if (options.queues.includes('fetch')) warmFetchedHtmlPool();
  if (options.queues.includes('page')) warmPageAnalysisPool();
  const connection = await NativeConnection.connect({
    address: options.temporalAddress,
    ...options.temporalConnectionOptions,
  });
  // The browser pool's pages match the render worker's slots, so no render ever waits for a page.
  configureRenderPool({ maxPages: activitySlots('render', options) });
  const activities = createActivities({ db: options.db });
  // Created together: a workflow worker's creation loads the bundle into its threads (~0.5 s for
  // each of the two on two cores), which then runs beside the other's instead of after it.
  const creating: Array<Promise<Worker>> = options.queues.map(async (queue) =>
    Worker.create({
      connection,
      namespace: options.namespace,
      taskQueue: TASK_QUEUES[queue],
      activities,
      ...(queue === 'crawl'
        ? {
            workflowBundle: await workflowBundle(),
            maxCachedWorkflows: workflowCacheSize(),
            maxConcurrentWorkflowTaskExecutions: workflowTaskSlots(),
            // A task for a cached workflow waits for this worker rather than go to the shared queue
            // after the SDK's 10 s, where it waits behind every other workflow's task and then replays
            // its whole history. New tasks still bypass a dead worker's sticky queue at once: the
            // server sees that it stopped polling.
            stickyQueueScheduleToStartTimeout: WORKFLOW_TASK_TIMEOUT,
          }
        : {}),
      maxConcurrentActivityTaskExecutions: activitySlots(queue, options),
      // The SDK sends a heartbeat at most every 0.8 x the heartbeat timeout by default, which leaves
      // a 30 s timeout 6 s of slack on a loaded machine; our activities beat every 5 s (2 s for a
      // fetch), so send each one on: a lost worker is then noticed after the timeout, never before.
      maxHeartbeatThrottleInterval: HEARTBEAT_THROTTLE,
      // A stopped worker hands its in-flight work back quickly instead of holding it.
      shutdownGraceTime: '5 seconds',
    }),
  );
  if (options.queues.includes('crawl')) {
    creating.push(
      workflowBundle().then((bundle) =>
        Worker.create({
          connection,
          namespace: options.namespace,
          taskQueue: CRAWL_COORDINATOR_QUEUE,
          // Workflows only: the crawl workflow's activities and children run on TASK_QUEUES.crawl.
          workflowBundle: bundle,
          // A few crawls at a time, each a long-lived workflow whose replay is dear: keep them all.
          maxCachedWorkflows: COORDINATOR_CACHE,
          maxConcurrentWorkflowTaskExecutions: COORDINATOR_TASK_SLOTS,
          stickyQueueScheduleToStartTimeout: WORKFLOW_TASK_TIMEOUT,
          shutdownGraceTime: '5 seconds',
        }),
      ),
    );
  }
  // Settled, not raced: a failure is thrown once every creation has ended, as one after another did.
  const created = await Promise.allSettled(creating);
  const failed = created.find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
  const workers = created.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  logger.info({ queues: options.queues, address: options.temporalAddress }, 'workers started');
  const done = Promise.all(workers.map((worker) => worker.run())).then(async () => {
    await connection.close();
    await closePageAnalysisPool();
    await closeRenderPool();
    await closeSharedEmbedderThread();
    await closeOriginConnections();
  });
  return {
    done,
    async shutdown() {
      for (const worker of workers) {
        if (worker.getState() === 'RUNNING') worker.shutdown();
      }
      await done;
    },
  };
}

/**
 * Workflows kept in memory between their tasks. The SDK sizes its cache from the heap limit
 * (~2,300 on a 4 GB heap). A cached workflow is mostly its own copy of the bundle's modules: ~0.17 MB
 * of the workflow thread's heap for an origin workflow, since zod and the crawl spec's schema are
 * preloaded once per thread (workflows/preloaded.ts); before that ~1.0 MB, and the crawl worker
 * peaked at 1.5 GB at 1,000 origins with 200 cached. An evicted workflow replays its history on its
 * next task: cheap for a page workflow, dearer for an origin (continue-as-new keeps it bounded).
 * GLEANER_WORKFLOW_CACHE sets it.
 */
function workflowCacheSize(): number {
  const fromEnv = Number(process.env.GLEANER_WORKFLOW_CACHE);
  return Number.isInteger(fromEnv) && fromEnv >= 2 ? fromEnv : DEFAULT_WORKFLOW_CACHE;
}
const DEFAULT_WORKFLOW_CACHE = 200;

/**
 * Workflow tasks the worker accepts at once (the SDK's default is 40). They run in turn on the SDK's one
 * workflow thread, and each one's timeout runs from when it was accepted: after a crawl worker restarts,
 * every open workflow replays, and with 40 accepted at once the last ones timed out on two loaded cores
 * and replayed again, over and over (the fault-injection test's stall; WORKFLOW_TASK_TIMEOUT is the other
 * half of the fix). Fewer slots cost throughput where activities share the event loop: the embedded
 * default's politeness ratio (bench:politeness inline, one quiet run each) was 0.380 at 8 slots, 0.513 at
 * 16, 0.587 at 24 and 0.573 at 40. GLEANER_WORKFLOW_TASK_SLOTS overrides it.
 */
function workflowTaskSlots(): number {
  const fromEnv = Number(process.env.GLEANER_WORKFLOW_TASK_SLOTS);
  return Number.isInteger(fromEnv) && fromEnv >= 2 ? fromEnv : DEFAULT_WORKFLOW_TASK_SLOTS;
}
const DEFAULT_WORKFLOW_TASK_SLOTS = 24;

/** Crawl workflows open at once that a crawl worker keeps cached; more are replayed when they wake. */
const COORDINATOR_CACHE = 20;
const COORDINATOR_TASK_SLOTS = 4;

/**
 * Fetches wait on the network, so many run at once. Extraction is synchronous CPU work and the
 * ONNX session already spreads one batch over every core, so more parallel work there only adds
 * memory and latency. Two embed slots: the embedder runs one model call at a time whatever the
 * slots (embed/embedder.ts queues every caller's texts), so the second only lets one page's reads
 * and writes overlap another's model call, and lets the queue fill calls across pages.
 */
function activitySlots(queue: QueueKind, options: StartWorkersOptions): number {
  switch (queue) {
    case 'fetch':
      return options.maxConcurrentFetches ?? 64;
    case 'page':
      return 4;
    case 'embed':
      return 2;
    case 'render':
      // Each page is a Chromium renderer (~100 MB); two keep a 2-core machine busy.
      return Number(process.env.GLEANER_RENDER_PAGES ?? 2);
    default:
      return 32;
  }
}
