/**
 * A small pool of worker threads for page analysis (decode, extract, chunk). Extraction is
 * synchronous DOM work of up to a second or more on large pages; on the worker's main thread it
 * would stall workflow tasks, activity heartbeats and the fetch timers of every other activity in
 * the process. Threads also use every core, and a memory limit per thread keeps a pathological page
 * from taking the process down with it.
 */
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import type { PageAnalysis, PageAnalysisInput } from './page-analysis';

/** Heap a thread may use; a page that needs more fails alone instead of killing the worker. */
const THREAD_HEAP_MB = 1024;
/**
 * Young generation of a thread (V8's default is about half). Parsing and Readability allocate
 * short-lived nodes and strings by the million; a larger nursery means fewer scavenges. Measured in a
 * worker thread over the first 800 wcxb-dev pages, alternating runs: median 27.5 / 26.6 ms per page
 * with the default, 25.8 / 24.8 ms with 96 MB (total −5 %); 48 MB gave no gain, 192 MB no more.
 * `npm run bench:extract` runs with the same size (`--max-semi-space-size=32`, a third of it).
 */
const THREAD_YOUNG_GENERATION_MB = 96;

let pool: Piscina<PageAnalysisInput, PageAnalysis> | undefined;

export function analysePageInThread(input: PageAnalysisInput): Promise<PageAnalysis> {
  pool ??= new Piscina({
    filename: new URL('./page-analysis-thread.mjs', import.meta.url).href,
    minThreads: 0,
    maxThreads: Math.max(1, Math.min(availableParallelism(), 4)),
    idleTimeout: 30_000,
    resourceLimits: {
      maxOldGenerationSizeMb: THREAD_HEAP_MB,
      maxYoungGenerationSizeMb: THREAD_YOUNG_GENERATION_MB,
    },
  });
  return pool.run(input);
}

/** Stops the threads (workers call this on shutdown; idle threads also exit by themselves). */
export async function closePageAnalysisPool(): Promise<void> {
  const closing = pool;
  pool = undefined;
  await closing?.destroy();
}
