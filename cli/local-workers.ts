/** Workers run inside a CLI process (the embedded default, `gleaner dev`, `gleaner worker`). */
import type { QueueKind } from '../domain/temporal-names';
import type { RuntimeOptions, WorkerStarter } from '../infra/runtime';

// Loaded on first use: the Temporal worker is a heavy import that commands without workers skip.
const loadRunWorkers = () => import('../workers/run-workers');
const startLocalWorkers: WorkerStarter = async (options) => (await loadRunWorkers()).startWorkers(options);

/**
 * openRuntime's `workers` option for these queues (none when the list is empty). What the workers
 * will need starts now, while the Temporal dev server and the store start, instead of after them:
 * - with the embed queue, the pipeline's model thread; the workers take the same thread
 *   (`sharedEmbedderThread`), and a model that fails to load here is tried again, and reported,
 *   when they start;
 * - the worker modules, and with the crawl queue the workflow bundle read from its cache (~0.4 s
 *   of the main thread together), which otherwise waited for the dev server to answer first. A
 *   failure here is met again, and reported, when the workers start.
 */
export function inProcessWorkers(queues: readonly QueueKind[]): RuntimeOptions['workers'] {
  if (queues.includes('embed'))
    void import('../embed/embedder-thread').then((thread) => thread.sharedEmbedderThread()).catch(() => {});
  if (queues.length > 0)
    void loadRunWorkers()
      .then((workers) => (queues.includes('crawl') ? workers.workflowBundle() : undefined))
      .catch(() => {});
  return { queues, start: startLocalWorkers };
}
