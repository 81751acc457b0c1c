/**
 * Small pools of worker threads for the CPU work on a stranger's page, each task under a deadline
 * (thread-deadline.ts): page analysis (decode, extract, chunk) for the page stage, and the fetch
 * path's HTML work (links, render heuristics, gzip; fetched-html.ts) in a pool of its own so a fetch
 * never waits behind a page's extraction. Extraction is synchronous DOM work of up to a second or
 * more on large pages; on the worker's main thread it would stall workflow tasks, activity
 * heartbeats and the fetch timers of every other activity in the process. Threads also use every
 * core, and a memory limit per thread keeps a pathological page from taking the process down with it.
 */
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { logger } from '../infra/logger';
import type { FetchedDocument, FetchedDocumentInput } from './fetched-document';
import type { FetchedHtml, FetchedHtmlInput, RenderAssessment } from './fetched-html';
import type { PageAnalysis, PageAnalysisInput } from './page-analysis';
import { type DeadlineTask, positiveIntegerFromEnv, runWakeTask, runWithDeadline } from './thread-deadline';

/**
 * Longest one page's analysis, or its HTML work in the fetch path, may run once a thread has started
 * it: then the thread is stopped and replaced, and the page is recorded as `extract-timeout`. Linear
 * work on a 10 MiB page (the largest body by default) takes a few seconds here; a page still running
 * at 30 s is pathological, and a page that slow costs at most this much. GLEANER_PAGE_DEADLINE_MS
 * overrides it.
 */
export const DEFAULT_PAGE_DEADLINE_MS = 30_000;

export function pageDeadlineMs(): number {
  return positiveIntegerFromEnv('GLEANER_PAGE_DEADLINE_MS') ?? DEFAULT_PAGE_DEADLINE_MS;
}

/** How a pooled task of one page is bounded. */
export interface PageTaskOptions {
  /** The activity's cancellation: the task is stopped with it. */
  signal?: AbortSignal;
  /** @default pageDeadlineMs() */
  deadlineMs?: number;
}

/** Heap a thread may use; a page that needs more fails alone instead of killing the worker. */
const THREAD_HEAP_MB = 1024;
/**
 * Young generation of a thread. Parsing and Readability allocate short-lived nodes and strings by the
 * million, and a larger nursery means fewer scavenges: over the first 800 wcxb-dev pages in one thread,
 * 96 MB took 25.8 / 24.8 ms per page against 27.5 / 26.6 ms with V8's default (−5 %); 48 MB gave no gain.
 * But a thread keeps its nursery resident, and in the embedded default the threads share one process
 * with PGlite, the model and the workflows (issue 18: under 1 GB). bench:pipeline on the 1,000-page
 * generated site, three runs side by side at load ~27 (each only ~60-70 pages in when stopped): the
 * gleaner process peaked at 1,039 MiB with 96 MB and 969 MiB with 32 MB; extraction is ~10 % of a page's CPU, so −5 % there is lost in the noise of the
 * pipeline. GLEANER_ANALYSIS_YOUNG_MB overrides it (`npm run bench:extract` runs at 96 MB:
 * `--max-semi-space-size=32`).
 */
const THREAD_YOUNG_GENERATION_MB = positiveIntegerFromEnv('GLEANER_ANALYSIS_YOUNG_MB') ?? 32;
/**
 * Threads at most: one per core up to 4, and one core fewer when this process's main thread is
 * itself busy with the rest of the pipeline (the embedded default: PGlite, the embedding model and
 * the workflows share it; see `reserveCoreForMainThread`). GLEANER_ANALYSIS_THREADS overrides it.
 */
const maxThreads = positiveIntegerFromEnv('GLEANER_ANALYSIS_THREADS');
let mainThreadBusy = false;

function threadCount(): number {
  const cores = Math.min(availableParallelism(), 4);
  return maxThreads ?? Math.max(1, mainThreadBusy ? cores - 1 : cores);
}

/**
 * Says that this process's main thread does CPU work of its own beside page analysis. In the
 * embedded default on 2 cores a second analysis thread only competed with the main thread for the
 * same cores, and each thread keeps ~75 MiB resident (issue 18: the embedded crawl under 1 GB).
 * Call before the first page is analysed.
 */
export function reserveCoreForMainThread(): void {
  mainThreadBusy = true;
}

/**
 * A pool of this module's thread kind: threads start on demand and exit after 30 s idle, each with
 * the heap limits page work is sized for.
 *
 * Piscina emits 'error' on the pool when a thread dies holding no task: one that a deadline let go
 * of and that then ran out of heap before it was stopped. With no listener that error killed the
 * whole crawl process (ERR_WORKER_OUT_OF_MEMORY, seen on a recrawl of a DOCX that unzips to 45 MB);
 * its page has already failed on its own, so it is logged and the pool starts a fresh thread.
 */
export function threadPool<Task, Result>(threadFile: string, maxThreads: number): Piscina<Task, Result> {
  const created = new Piscina<Task, Result>({
    filename: new URL(threadFile, import.meta.url).href,
    minThreads: 0,
    maxThreads,
    idleTimeout: 30_000,
    resourceLimits: {
      maxOldGenerationSizeMb: THREAD_HEAP_MB,
      maxYoungGenerationSizeMb: THREAD_YOUNG_GENERATION_MB,
    },
  });
  created.on('error', (error: unknown) =>
    logger.warn({ err: error, threadFile }, 'a page thread died outside any task; its pool starts another'),
  );
  return created;
}

let pool: Piscina<DeadlineTask<PageAnalysisInput>, PageAnalysis> | undefined;

function analysisPool() {
  pool ??= threadPool('./page-analysis-thread.mjs', threadCount());
  return pool;
}

/** Analyses one page in a thread; rejects with ThreadDeadlineError past its deadline. */
export function analysePageInThread(
  input: PageAnalysisInput,
  options: PageTaskOptions = {},
): Promise<PageAnalysis> {
  return runWithDeadline(analysisPool(), input, {
    deadlineMs: options.deadlineMs ?? pageDeadlineMs(),
    ...(options.signal ? { signal: options.signal } : {}),
    describe: `analysing ${input.url}`,
  });
}

/**
 * Threads for the fetch path's HTML work: a few milliseconds a page (the parsers are linear), so one
 * thread keeps up with many fetches; two when the main thread has no pipeline of its own to run.
 * GLEANER_HTML_THREADS overrides it.
 */
function htmlThreadCount(): number {
  return (
    positiveIntegerFromEnv('GLEANER_HTML_THREADS') ??
    (mainThreadBusy ? 1 : Math.min(2, availableParallelism()))
  );
}

let htmlPool:
  | Piscina<
      DeadlineTask<FetchedHtmlInput | FetchedDocumentInput | string>,
      FetchedHtml | FetchedDocument | RenderAssessment
    >
  | undefined;

function fetchedHtmlPool() {
  htmlPool ??= threadPool('./fetched-html-thread.mjs', htmlThreadCount());
  return htmlPool;
}

/** The fetch path's HTML work on one page, in a thread; rejects with ThreadDeadlineError past its deadline. */
export function readFetchedHtmlInThread(
  input: FetchedHtmlInput,
  options: PageTaskOptions = {},
): Promise<FetchedHtml> {
  return runWithDeadline(fetchedHtmlPool(), input, {
    deadlineMs: options.deadlineMs ?? pageDeadlineMs(),
    ...(options.signal ? { signal: options.signal } : {}),
    describe: `reading the links of ${input.finalUrl}`,
  }) as Promise<FetchedHtml>;
}

/** The fetch path's work on a document (its links, hash and gzip), in the same pool and under the same deadline. */
export function readFetchedDocumentInThread(
  input: FetchedDocumentInput,
  options: PageTaskOptions = {},
): Promise<FetchedDocument> {
  return runWithDeadline(fetchedHtmlPool(), input, {
    deadlineMs: options.deadlineMs ?? pageDeadlineMs(),
    ...(options.signal ? { signal: options.signal } : {}),
    name: 'readFetchedDocumentTask',
    describe: `reading the ${input.type} document ${input.finalUrl}`,
  }) as Promise<FetchedDocument>;
}

/** The render heuristics alone on some HTML, in a thread (the rendering activity's raw and rendered DOM). */
export function assessHtmlInThread(html: string, options: PageTaskOptions = {}): Promise<RenderAssessment> {
  return runWithDeadline(fetchedHtmlPool(), html, {
    deadlineMs: options.deadlineMs ?? pageDeadlineMs(),
    ...(options.signal ? { signal: options.signal } : {}),
    name: 'renderAssessmentTask',
    describe: 'judging whether a page needs a browser',
  }) as Promise<RenderAssessment>;
}

/**
 * Starts the threads of the fetch path's pool and loads their modules while the crawl is still starting.
 * Loaded by the first fetch instead, they made every origin's first lap the longest: with 20 origins
 * starting at once on two cores, the first fetch activity completed 1.2-1.4 s after its response
 * (`bench:politeness`, session 28), the next ones ~0.1 s. An idle thread still exits after
 * `idleTimeout`; a failure is left for the first real task to report.
 */
export function warmFetchedHtmlPool(): void {
  // Every thread, not one: a burst of first pages (every origin's first response lands in the same
  // second) queued behind one warm thread made piscina start the second cold, in the middle of the
  // burst. Each queued no-op starts a thread of its own (piscina spawns while tasks are queued).
  const pool = fetchedHtmlPool();
  for (let i = 0; i < pool.maxThreads; i++) runWakeTask(pool);
}

/**
 * Starts a page-analysis thread, with its modules and tokenizer, while the worker starts. Left to the
 * first page batch, they delayed the model's first chunks by seconds in a new crawl: the first batch's
 * `processPagesContent` took 2.8 s (bench:pipeline doc-weight, session 29). An idle thread still exits
 * after `idleTimeout`; a failure is left for the first real task to report.
 */
export function warmPageAnalysisPool(): void {
  runWakeTask(analysisPool());
}

/** Threads the fetch path's pool holds now (started or starting). */
export function fetchedHtmlThreads(): number {
  return htmlPool?.threads.length ?? 0;
}

/** Stops the threads of both pools (workers call this on shutdown; idle threads also exit by themselves). */
export async function closePageAnalysisPool(): Promise<void> {
  const closing = [pool, htmlPool];
  pool = undefined;
  htmlPool = undefined;
  await Promise.all(closing.map((each) => each?.destroy()));
}
