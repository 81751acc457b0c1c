/** Workers run inside a CLI process (the embedded default, `gleaner dev`, `gleaner worker`). */
import type { QueueKind } from '../domain/temporal-names';
import type { RuntimeOptions, WorkerStarter } from '../infra/runtime';

// Loaded on first use: the Temporal worker is a heavy import that commands without workers skip.
const startLocalWorkers: WorkerStarter = async (options) =>
  (await import('../workers/run-workers')).startWorkers(options);

/**
 * openRuntime's `workers` option for these queues (none when the list is empty). With the embed
 * queue, the pipeline's model thread starts now, while the Temporal dev server and the store start,
 * instead of after them; the workers take the same thread (`sharedEmbedderThread`), and a model that
 * fails to load here is tried again, and reported, when they start.
 */
export function inProcessWorkers(queues: readonly QueueKind[]): RuntimeOptions['workers'] {
  if (queues.includes('embed'))
    void import('../embed/embedder-thread').then((thread) => thread.sharedEmbedderThread()).catch(() => {});
  return { queues, start: startLocalWorkers };
}
