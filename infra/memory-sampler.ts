/**
 * Where a process's memory goes, sampled while it runs: GLEANER_MEMORY_SAMPLES=FILE appends one JSON
 * line every GLEANER_MEMORY_SAMPLE_MS (default 2000) with the RSS split by kind (/proc/self/status),
 * the main isolate's heap and external memory, every worker thread's JavaScript heap (the diagnostic
 * report covers the workflow thread and the page-analysis threads) and whatever named sources
 * register here (PGlite's WebAssembly memory). Off unless the variable is set; the numbers behind
 * the embedded default's memory settings (docs/scaling.md) come from it.
 */
import { appendFileSync, readFileSync } from 'node:fs';

const MIB = 2 ** 20;
const sources = new Map<string, () => number | undefined>();

/** Adds a named byte count to every sample (e.g. a WebAssembly memory). */
export function registerMemorySource(name: string, bytes: () => number | undefined): void {
  sources.set(name, bytes);
}

function statusMiB(): Record<string, number> {
  const found: Record<string, number> = {};
  try {
    for (const line of readFileSync('/proc/self/status', 'utf8').split('\n')) {
      const match = /^(VmRSS|VmHWM|RssAnon|RssFile|RssShmem):\s+(\d+) kB/.exec(line);
      if (match) found[match[1] as string] = Math.round(Number(match[2]) / 1024);
      const threads = /^Threads:\s+(\d+)/.exec(line);
      if (threads) found.threads = Number(threads[1]);
    }
  } catch {}
  return found;
}

interface ReportHeap {
  javascriptHeap?: { totalMemory?: number; usedMemory?: number };
  header?: { threadId?: number };
}

/** JavaScript heaps of the worker threads, in MiB (total committed / used). */
function workerHeapsMiB(): Array<{ total: number; used: number }> {
  try {
    const report = process.report?.getReport() as unknown as { workers?: ReportHeap[] } | undefined;
    return (report?.workers ?? []).map((w) => ({
      total: Math.round((w.javascriptHeap?.totalMemory ?? 0) / MIB),
      used: Math.round((w.javascriptHeap?.usedMemory ?? 0) / MIB),
    }));
  } catch {
    return [];
  }
}

export function memorySample(): Record<string, unknown> {
  const usage = process.memoryUsage();
  const named: Record<string, number> = {};
  for (const [name, bytes] of sources) {
    const value = bytes();
    if (value !== undefined) named[name] = Math.round(value / MIB);
  }
  const workers = workerHeapsMiB();
  return {
    at: new Date().toISOString(),
    ...statusMiB(),
    heapTotal: Math.round(usage.heapTotal / MIB),
    heapUsed: Math.round(usage.heapUsed / MIB),
    external: Math.round(usage.external / MIB),
    arrayBuffers: Math.round(usage.arrayBuffers / MIB),
    workerHeapsTotal: workers.reduce((sum, w) => sum + w.total, 0),
    workerHeaps: workers.map((w) => `${w.used}/${w.total}`).join(' '),
    ...named,
  };
}

let timer: NodeJS.Timeout | undefined;

/** Starts sampling when GLEANER_MEMORY_SAMPLES names a file; a no-op otherwise. */
export function startMemorySampler(): void {
  const file = process.env.GLEANER_MEMORY_SAMPLES;
  if (!file || timer) return;
  const everyMs = Number(process.env.GLEANER_MEMORY_SAMPLE_MS) || 2000;
  const write = () => {
    try {
      appendFileSync(file, `${JSON.stringify(memorySample())}\n`);
    } catch {}
  };
  write();
  timer = setInterval(write, everyMs);
  timer.unref();
  process.once('exit', write);
}
