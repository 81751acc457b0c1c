/**
 * A deadline per task of a worker-thread pool, counted from the moment the thread starts the task
 * (not from when it was queued: a healthy page waiting behind others under load must not time out).
 * On the deadline, or when the activity is cancelled, the task is aborted: piscina terminates the
 * thread running it (the only way to stop synchronous code that never yields) and starts a fresh
 * one for the next task. Pages are written by strangers; this bounds what one page can cost.
 *
 * The thread says when it starts through a shared 8-byte cell ({@link markTaskStarted}); the
 * caller's timer reads it, so a thread spinning in a parser needs to do nothing more.
 */
import type { Piscina } from 'piscina';

/** What a task of a deadline pool receives: the caller's input and the cell its start is marked in. */
export interface DeadlineTask<I> {
  input: I;
  /** 8 bytes: the start time (ms since the epoch) as a BigInt64, 0 while the task is queued. */
  startedAt: SharedArrayBuffer;
}

/** A task ran past its deadline; its thread was stopped. */
export class ThreadDeadlineError extends Error {
  override readonly name = 'ThreadDeadlineError';
  constructor(
    readonly deadlineMs: number,
    readonly task: string,
  ) {
    super(`${task} took longer than its deadline of ${deadlineMs} ms; its thread was stopped`);
  }
}

/** Called by the thread as it starts the task's CPU work (after any one-time setup of the thread). */
export function markTaskStarted(task: DeadlineTask<unknown>): void {
  Atomics.store(new BigInt64Array(task.startedAt), 0, BigInt(Date.now()));
}

export interface DeadlineRunOptions {
  /** Longest a task may run once its thread has started it. */
  deadlineMs: number;
  /** Aborts the task too (the activity's cancellation signal). */
  signal?: AbortSignal;
  /** The thread module's export to run. @default the default export */
  name?: string;
  /** Says what timed out, in the error. */
  describe: string;
}

/** How often a queued task's start is looked for, at most. */
const QUEUE_POLL_MS = 500;

export async function runWithDeadline<I, O>(
  pool: Piscina<DeadlineTask<I>, O>,
  input: I,
  options: DeadlineRunOptions,
): Promise<O> {
  const { deadlineMs, signal } = options;
  const startedAt = new SharedArrayBuffer(8);
  const started = new BigInt64Array(startedAt);
  const abort = new AbortController();
  const cancel = () => abort.abort(signal?.reason);
  signal?.addEventListener('abort', cancel, { once: true });
  if (signal?.aborted) cancel();
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const check = () => {
    const startedAtMs = Number(Atomics.load(started, 0));
    if (startedAtMs === 0) {
      timer = setTimeout(check, Math.min(deadlineMs, QUEUE_POLL_MS));
      return;
    }
    const leftMs = startedAtMs + deadlineMs - Date.now();
    if (leftMs > 0) {
      timer = setTimeout(check, leftMs);
      return;
    }
    timedOut = true;
    abort.abort(new ThreadDeadlineError(deadlineMs, options.describe));
  };
  timer = setTimeout(check, deadlineMs);
  try {
    return await pool.run(
      { input, startedAt },
      { signal: abort.signal, ...(options.name ? { name: options.name } : {}) },
    );
  } catch (error) {
    if (abort.signal.aborted) wakeQueue(pool);
    if (timedOut) throw new ThreadDeadlineError(deadlineMs, options.describe);
    throw error;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', cancel);
  }
}

/** The no-op export every thread module of a deadline pool has (see {@link wakeQueue}). */
export const WAKE_TASK = 'wake';

/**
 * Submits the no-op, which starts a thread if none is free (loading the thread module); the pool's
 * own task type is for its real tasks, so it is taken as any pool here.
 */
export function runWakeTask(pool: Piscina<never, unknown>): void {
  (pool as unknown as Piscina<undefined, unknown>).run(undefined, { name: WAKE_TASK }).catch(() => {});
}

/**
 * Piscina (5.3) starts a thread for queued tasks only when a task is submitted: once it terminates
 * the thread of an aborted task, tasks queued behind it wait until the next `run()`, and with no
 * further page they would wait for ever. Submitting a no-op starts a thread, which takes the queue
 * in order (the no-op last).
 */
function wakeQueue(pool: Piscina<never, unknown>): void {
  if (pool.queueSize === 0) return;
  runWakeTask(pool);
}

/** A positive integer from the environment, or undefined. */
export function positiveIntegerFromEnv(name: string): number | undefined {
  const value = Number(process.env[name]);
  return Number.isInteger(value) && value >= 1 ? value : undefined;
}
