/**
 * Names Temporal sees — task queues, workflow ids, workflow types — defined once so the CLI,
 * workers, API and workflows can never disagree.
 */

/**
 * The workflow task timeout of a crawl and of the workflows it starts (origins, page batches, pages);
 * continue-as-new keeps it. A task's timeout runs from when a worker accepts it, and a crawl worker
 * that has just restarted accepts many replays at once and runs them in turn on one thread: at the
 * server's default of 10 s the last of them timed out on two loaded cores and replayed again, over and
 * over (fault-injection test). The crawl workflow looped the same way: with 476 origins its runs
 * reached 4,000 events and 2 MB, and once one task was late its uncached replay took longer than 10 s
 * too, 93 timeouts in a row (1,000 × 10 scale run, session 12). A worker that dies holding a task
 * delays that one workflow by at most this long.
 */
export const WORKFLOW_TASK_TIMEOUT = '30 seconds';

/**
 * The heartbeat timeout of the page and embed activities and of a recrawl's claim: how long work
 * held by a killed worker waits before it is retried elsewhere. They beat every 5 s from a timer,
 * their heavy work off the event loop; the workers send each beat on within 5 s (run-workers.ts).
 */
export const ACTIVITY_HEARTBEAT_TIMEOUT = '30 seconds';

/**
 * The crawl workflow's query for its live progress (workflows/messages.ts defines it with this name;
 * the API and the MCP tools ask it by name through infra/crawl-workflow-state.ts).
 */
export const CRAWL_PROGRESS_QUERY = 'progress';

/** Task queues, one per kind of work, so each kind of worker scales on its own. */
export const TASK_QUEUES = {
  /** Workflow tasks only: cheap, CPU-light orchestration. */
  crawl: 'gleaner-crawl',
  /** Network I/O: fetching pages and robots.txt. */
  fetch: 'gleaner-fetch',
  /** Per-page CPU work: extract → normalise → chunk. */
  page: 'gleaner-page',
  /** Embedding chunks with the ONNX model: CPU-heavy, batched, scaled on its own machines. */
  embed: 'gleaner-embed',
  /** Rendering pages in headless Chromium: memory-heavy, so browser workers scale and fail on their own. */
  render: 'gleaner-render',
  /** Summary and tag passes through an OpenAI-compatible LLM endpoint: slow, rate-limited, remote. */
  llm: 'gleaner-llm',
} as const;

/**
 * The crawl workflows' own task queue, served by every `crawl` worker beside TASK_QUEUES.crawl with
 * its own slots and workflow thread. On the shared queue a crawl's tasks waited behind its origins'
 * (1,000 origins × 10 pages: 12 tasks in 53 min waited past the 30 s sticky timeout, then 95-263 s
 * on the shared queue and a 9-23 s replay, with no quota answered meanwhile).
 */
export const CRAWL_COORDINATOR_QUEUE = 'gleaner-crawl-coordinator';

/**
 * What every start of a crawl workflow sets — `gleaner crawl`, `POST /crawls`, a schedule's action and
 * the benches — so a change to the crawl's queue or task timeout reaches all of them.
 */
export const CRAWL_WORKFLOW_START = {
  taskQueue: CRAWL_COORDINATOR_QUEUE,
  workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT,
} as const;

export type QueueKind = keyof typeof TASK_QUEUES;
export const QUEUE_KINDS = Object.keys(TASK_QUEUES) as QueueKind[];

export const WORKFLOW_TYPES = {
  crawl: 'crawlWorkflow',
  origin: 'originWorkflow',
  page: 'pageWorkflow',
  pageBatch: 'pageBatchWorkflow',
  /** A crawl's signed webhooks of one moment (started, completed): workflows/webhooks.ts. */
  webhooks: 'webhooksWorkflow',
} as const;

export function crawlWorkflowId(crawlId: string): string {
  return `crawl-${crawlId}`;
}

/** The webhooks workflow of one crawl's moment: the id is the crawl's, so it is started once. */
export function webhooksWorkflowId(crawlId: string, moment: 'started' | 'completed'): string {
  return `crawl-${crawlId}/webhooks/${moment}`;
}

/**
 * Asked of a crawl's `started` webhooks workflow: the receivers whose crawl.started is settled
 * (accepted, or failed for good), so the `completed` one sends each receiver nothing before it.
 */
export const STARTED_SETTLED_QUERY = 'settledReceivers';

/** Origin workflow ids embed the origin readably (Temporal allows any UTF-8 up to 1000 bytes). */
export function originWorkflowId(crawlId: string, origin: string): string {
  return `crawl-${crawlId}/origin/${origin}`;
}

/** One page workflow per crawl and page; the key is the page row id so retries reuse it. */
export function pageWorkflowId(crawlId: string, pageId: number | string): string {
  return `crawl-${crawlId}/page/${pageId}`;
}

/**
 * One page batch workflow per origin and sequence number (carried by the origin workflow across
 * continue-as-new), so a batch's id is stable across retries and replays and never reused.
 */
export function pageBatchWorkflowId(crawlId: string, origin: string, seq: number): string {
  return `crawl-${crawlId}/pages/${origin}/${seq}`;
}

/**
 * The page batches a crawl starts at its end for rel=canonical copies whose canonical page it never
 * made searchable (activities/orphan-copies.ts): apart from the origin's own batches, whose numbers
 * the origin workflow holds.
 */
export function orphanBatchWorkflowId(crawlId: string, origin: string, seq: number): string {
  return `crawl-${crawlId}/orphan-copies/${origin}/${seq}`;
}

/**
 * The visibility query that lists crawls (and recrawls fired by schedules) without their origin and
 * page children: a crawl of 10,000 pages makes 10,000 page workflows, which would bury the crawl
 * itself in Temporal Web's default list. `ParentWorkflowId` is a system search attribute of Temporal
 * ≥ 1.27, so no custom attribute needs registering on the operator's cluster.
 */
export const TOP_LEVEL_WORKFLOWS_QUERY = 'ParentWorkflowId IS NULL';

/** Temporal Web's workflow list filtered to crawls, e.g. for `gleaner dev` to print. */
export function crawlsListUrl(temporalUiUrl: string, namespace: string): string {
  return `${temporalUiUrl}/namespaces/${encodeURIComponent(namespace)}/workflows?query=${encodeURIComponent(TOP_LEVEL_WORKFLOWS_QUERY)}`;
}

/**
 * Error types an activity retry cannot fix: bugs and bad input. Everything else (a database or
 * network outage) is retried.
 */
export const NON_RETRYABLE_ERROR_TYPES = [
  'TypeError',
  'RangeError',
  'SyntaxError',
  'ReferenceError',
  'InvalidUrlError',
];
