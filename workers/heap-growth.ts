/**
 * How far V8 lets a worker process's JavaScript heaps grow past their live data before a full
 * collection. V8's own factor rises to 4x when a heap allocates fast, and a workflow thread does:
 * each activation, replay and payload conversion is garbage a moment later. At 1,000 origins the
 * crawl worker's workflow thread swung between ~40 MiB live and ~250 MiB before each full
 * collection, and its peak RSS rode on the top of that swing (bench:scale --memory-samples).
 * A fixed factor keeps the swing near the live data, at a price in throughput, so it is the
 * operator's choice and off by default. bench:scale 1,000 origins x 2 pages, one run each, one
 * after the other, load 4-5: V8's own factor 3.36 pages/s with the crawl worker at 688 MiB peak
 * (its workflow thread's used heap up to 238 MiB); 50 % (1.5x) 2.83 pages/s at 528 MiB (101 MiB).
 * The setting is process-wide (every isolate), read at each collection. GLEANER_HEAP_GROWING_PERCENT
 * sets it; 0 is V8's own heuristics.
 */
import { setFlagsFromString } from 'node:v8';

const DEFAULT_HEAP_GROWING_PERCENT = 0;

/** The heap growing percent this process runs with: the environment's, else the default. */
export function heapGrowingPercent(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.GLEANER_HEAP_GROWING_PERCENT;
  if (raw === undefined || raw.trim() === '') return DEFAULT_HEAP_GROWING_PERCENT;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 400)
    throw new Error(`GLEANER_HEAP_GROWING_PERCENT must be an integer from 0 to 400, not "${raw}"`);
  return value;
}

let applied: number | undefined;

/** Sets V8's heap growing factor for this process once; later calls keep the first value. */
export function limitHeapGrowth(env: NodeJS.ProcessEnv = process.env): number {
  if (applied !== undefined) return applied;
  applied = heapGrowingPercent(env);
  // 0 is V8's default already: nothing to set.
  if (applied > 0) setFlagsFromString(`--heap-growing-percent=${applied}`);
  return applied;
}
