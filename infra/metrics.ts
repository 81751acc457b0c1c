/**
 * Prometheus metrics: one registry per process. Latency histograms are observed where the work
 * happens (activities call the `observe…` helpers); corpus counts are read from Postgres and
 * queue backlogs from Temporal when `/metrics` is scraped (at most every 15 s, see
 * `MetricsScraper`), so every process serving the API reports the same totals however many
 * workers wrote them.
 *
 * Histograms live in the process that observes them: in `gleaner dev` that is the API's own
 * process; a separate `gleaner worker` keeps its own (not yet exported over HTTP).
 */
import type { Client } from '@temporalio/client';
import { collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Database } from '../db/database';
import { CRAWL_COORDINATOR_QUEUE, QUEUE_KINDS, TASK_QUEUES } from '../domain/temporal-names';

export const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: 'gleaner_process_' });

// Page fetches run from a few ms on loopback to the 30 s body timeout.
const FETCH_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const EXTRACT_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const EMBED_BUCKETS_S = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

const fetchSeconds = new Histogram({
  name: 'gleaner_fetch_duration_seconds',
  help: 'Time to fetch one page (request to last body byte), by outcome',
  labelNames: ['outcome'] as const,
  buckets: FETCH_BUCKETS_S,
  registers: [registry],
});

const extractSeconds = new Histogram({
  name: 'gleaner_extract_duration_seconds',
  help: 'Time to extract one page (HTML to Markdown, metadata and chunks)',
  buckets: EXTRACT_BUCKETS_S,
  registers: [registry],
});

const embedSeconds = new Histogram({
  name: 'gleaner_embed_duration_seconds',
  help: 'Time to embed one batch of chunks',
  buckets: EMBED_BUCKETS_S,
  registers: [registry],
});

const embedBatchChunks = new Histogram({
  name: 'gleaner_embed_batch_chunks',
  help: 'Chunks per embedding batch',
  buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
  registers: [registry],
});

const apiRequestSeconds = new Histogram({
  name: 'gleaner_api_request_duration_seconds',
  help: 'HTTP API request latency by route, method and status code',
  labelNames: ['route', 'method', 'status'] as const,
  buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [registry],
});

/** One page fetch took `durationMs`; `outcome` as recorded in `fetches.outcome` (e.g. 'ok'). */
export function observeFetch(durationMs: number, outcome = 'ok'): void {
  fetchSeconds.observe({ outcome }, durationMs / 1000);
}

/** One page's extraction took `durationMs`. */
export function observeExtract(durationMs: number): void {
  extractSeconds.observe(durationMs / 1000);
}

/** One embedding batch of `chunkCount` chunks took `durationMs`. */
export function observeEmbed(durationMs: number, chunkCount: number): void {
  embedSeconds.observe(durationMs / 1000);
  embedBatchChunks.observe(chunkCount);
}

export function observeApiRequest(route: string, method: string, status: number, durationMs: number): void {
  apiRequestSeconds.observe({ route, method, status: String(status) }, durationMs / 1000);
}

/** Where scrape-time gauges read from: the store and Temporal the serving API uses. */
export interface MetricSources {
  db: Database;
  temporal?: () => Promise<Client>;
  namespace?: string;
  /** Bound on each source's queries so a slow store cannot hang a scrape. @default 3000 */
  timeoutMs?: number;
}

const sourceUp = new Gauge({
  name: 'gleaner_metrics_source_up',
  help: 'Whether the last scrape could read this source (1) or not (0)',
  labelNames: ['source'] as const,
  registers: [registry],
});

const pagesStored = gauge('gleaner_pages_stored', 'Pages stored in the corpus (one row per canonical URL)');
const pagesIndexed = gauge('gleaner_pages_indexed', 'Stored pages that were indexed (not noindex)');
const pagesExtracted = gauge('gleaner_pages_extracted', 'Stored pages with an extraction (Markdown)');
const chunksStored = gauge('gleaner_chunks_stored', 'Chunks stored');
const chunksEmbedded = gauge('gleaner_chunks_embedded', 'Chunks with an embedding');
const linkEdges = gauge('gleaner_link_edges', 'Edges in the link graph');
const crawlsByStatus = new Gauge({
  name: 'gleaner_crawls',
  help: 'Crawls recorded, by status',
  labelNames: ['status'] as const,
  registers: [registry],
});
const fetchesByOutcome = new Gauge({
  name: 'gleaner_fetches',
  help: "Fetch attempts recorded (fetches table), by outcome; outcome 'ok' counts pages fetched",
  labelNames: ['outcome'] as const,
  registers: [registry],
});
const robotsBlocked = gauge('gleaner_robots_blocked', 'URLs not fetched because robots.txt disallowed them');
const bytesFetched = gauge('gleaner_fetched_bytes', 'Response body bytes received, all fetches together');
const queueBacklog = new Gauge({
  name: 'gleaner_task_queue_backlog',
  help: 'Approximate tasks waiting in a Temporal task queue (describeTaskQueue stats), by queue and type',
  labelNames: ['queue', 'type'] as const,
  registers: [registry],
});
const queuePollers = new Gauge({
  name: 'gleaner_task_queue_pollers',
  help: 'Workers polling a Temporal task queue recently, by queue and type',
  labelNames: ['queue', 'type'] as const,
  registers: [registry],
});

function gauge(name: string, help: string): Gauge {
  return new Gauge({ name, help, registers: [registry] });
}

function withTimeout<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function readDatabase(db: Database): Promise<void> {
  const pages = await db.query<{ stored: number; indexed: number; extracted: number }>(
    `SELECT count(*)::int AS stored, count(indexed_at)::int AS indexed, count(markdown)::int AS extracted
     FROM pages`,
  );
  const chunks = await db.query<{ stored: number; embedded: number }>(
    'SELECT count(*)::int AS stored, count(embedding)::int AS embedded FROM chunks',
  );
  const links = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM links');
  const fetches = await db.query<{ outcome: string; n: number; bytes: number }>(
    `SELECT outcome, count(*)::int AS n, coalesce(sum(bytes), 0)::float8 AS bytes
     FROM fetches GROUP BY outcome`,
  );
  const crawls = await db.query<{ status: string; n: number }>(
    'SELECT status, count(*)::int AS n FROM crawls GROUP BY status',
  );
  pagesStored.set(pages.rows[0]?.stored ?? 0);
  pagesIndexed.set(pages.rows[0]?.indexed ?? 0);
  pagesExtracted.set(pages.rows[0]?.extracted ?? 0);
  chunksStored.set(chunks.rows[0]?.stored ?? 0);
  chunksEmbedded.set(chunks.rows[0]?.embedded ?? 0);
  linkEdges.set(links.rows[0]?.n ?? 0);
  fetchesByOutcome.reset();
  let bytes = 0;
  let blocked = 0;
  for (const row of fetches.rows) {
    fetchesByOutcome.set({ outcome: row.outcome }, row.n);
    bytes += Number(row.bytes);
    if (row.outcome === 'robots-blocked') blocked = row.n;
  }
  robotsBlocked.set(blocked);
  bytesFetched.set(bytes);
  crawlsByStatus.reset();
  for (const row of crawls.rows) crawlsByStatus.set({ status: row.status }, row.n);
}

// Enum values of temporal.api.enums.v1.TaskQueueType.
const TASK_QUEUE_TYPES = { workflow: 1, activity: 2 } as const;

async function readTaskQueues(client: Client, namespace: string): Promise<void> {
  queueBacklog.reset();
  queuePollers.reset();
  const queues: Array<[string, string]> = [
    ...QUEUE_KINDS.map((kind): [string, string] => [kind, TASK_QUEUES[kind]]),
    ['crawl-coordinator', CRAWL_COORDINATOR_QUEUE],
  ];
  await Promise.all(
    queues.flatMap(([kind, name]) =>
      Object.entries(TASK_QUEUE_TYPES).map(async ([type, taskQueueType]) => {
        const response = await client.workflowService.describeTaskQueue({
          namespace,
          taskQueue: { name },
          taskQueueType,
          reportStats: true,
        });
        const backlog = response.stats?.approximateBacklogCount;
        queueBacklog.set(
          { queue: kind, type },
          backlog === undefined || backlog === null ? 0 : Number(backlog),
        );
        queuePollers.set({ queue: kind, type }, response.pollers?.length ?? 0);
      }),
    ),
  );
}

/** Reads every scrape-time gauge once; a source that fails is reported as down, never as an error. */
async function refreshScrapeGauges(sources: MetricSources): Promise<void> {
  const { db, temporal, namespace = 'default', timeoutMs = 3000 } = sources;
  const database = withTimeout(readDatabase(db), timeoutMs, 'the database')
    .then(() => sourceUp.set({ source: 'database' }, 1))
    .catch(() => sourceUp.set({ source: 'database' }, 0));
  const queues = temporal
    ? withTimeout(
        temporal().then((client) => readTaskQueues(client, namespace)),
        timeoutMs,
        'Temporal',
      )
        .then(() => sourceUp.set({ source: 'temporal' }, 1))
        .catch(() => sourceUp.set({ source: 'temporal' }, 0))
    : Promise.resolve();
  await Promise.all([database, queues]);
}

/** Default age of the scrape-time gauges: Prometheus scrapes every 15 s or more by default. */
export const METRICS_MAX_AGE_MS = 15_000;

/**
 * `/metrics` for one API: the corpus counts are full-table scans, so they are read at most once per
 * `maxAgeMs` and concurrent scrapes share one read. Anyone who can reach `/metrics` could otherwise
 * keep the store busy counting.
 */
export class MetricsScraper {
  private refreshedAtMs = Number.NEGATIVE_INFINITY;
  private refreshing: Promise<void> | undefined;
  private readonly maxAgeMs: number;

  constructor(
    private readonly sources: MetricSources,
    options: { maxAgeMs?: number } = {},
  ) {
    this.maxAgeMs = options.maxAgeMs ?? METRICS_MAX_AGE_MS;
  }

  private refresh(): Promise<void> {
    if (this.refreshing) return this.refreshing;
    if (performance.now() - this.refreshedAtMs < this.maxAgeMs) return Promise.resolve();
    this.refreshing = refreshScrapeGauges(this.sources).finally(() => {
      this.refreshedAtMs = performance.now();
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  /** The Prometheus text exposition of every metric, scrape-time gauges at most `maxAgeMs` old. */
  async render(): Promise<{ contentType: string; body: string }> {
    await this.refresh();
    return { contentType: registry.contentType, body: await registry.metrics() };
  }
}
