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

function positiveIntegerFromEnv(name: string): number | undefined {
  const value = Number(process.env[name]);
  return Number.isInteger(value) && value >= 1 ? value : undefined;
}

let pool: Piscina<PageAnalysisInput, PageAnalysis> | undefined;

export function analysePageInThread(input: PageAnalysisInput): Promise<PageAnalysis> {
  pool ??= new Piscina({
    filename: new URL('./page-analysis-thread.mjs', import.meta.url).href,
    minThreads: 0,
    maxThreads: threadCount(),
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
