/** Workers run inside a CLI process (the embedded default, `gleaner dev`, `gleaner worker`). */
import path from 'node:path';
import { readLock } from '../db/pglite-database';
import type { QueueKind } from '../domain/temporal-names';
import { gleanerHome } from '../infra/gleaner-home';
import type { RuntimeOptions, WorkerStarter } from '../infra/runtime';

// Loaded on first use: the Temporal worker is a heavy import that commands without workers skip.
const loadRunWorkers = () => import('../workers/run-workers');
const startLocalWorkers: WorkerStarter = async (options) => (await loadRunWorkers()).startWorkers(options);

/**
 * Whether openRuntime will attach to a running `gleaner dev` in GLEANER_HOME (the embedded store's
 * lock names a live process that serves it), as infra/runtime.ts decides: then that process's
 * workers serve every queue, deliver webhooks and sign them, and this one starts no workers.
 * False with DATABASE_URL set (nothing to attach to). A `gleaner dev` that starts or stops between
 * this answer and openRuntime is possible; callers use it only for what such a race can afford.
 */
export function attachesToRunningDev(): boolean {
  if (process.env.DATABASE_URL) return false;
  const holder = readLock(path.join(gleanerHome(), 'pgdata.lock'));
  return Boolean(holder?.serving && holder.databaseUrl);
}

/**
 * openRuntime's `workers` option for these queues (none when the list is empty). Unless this process
 * will attach to a running `gleaner dev` (whose workers serve it, so none start here), what the workers
 * will need starts now, while the Temporal dev server and the store start, instead of after them:
 * - with the embed queue, the pipeline's model thread; the workers take the same thread
 *   (`sharedEmbedderThread`), and a model that fails to load here is tried again, and reported,
 *   when they start;
 * - the worker modules, and with the crawl queue the workflow bundle read from its cache (~0.4 s
 *   of the main thread together), which otherwise waited for the dev server to answer first. A
 *   failure here is met again, and reported, when the workers start.
 */
export function inProcessWorkers(queues: readonly QueueKind[]): RuntimeOptions['workers'] {
  // Started for nothing when attached, and a model still loading when a command that failed early
  // exits costs the process's exit a wait (cli/main.ts). Should a dev stop meanwhile, the workers
  // load what they need when they start.
  if (queues.length > 0 && attachesToRunningDev()) return { queues, start: startLocalWorkers };
  if (queues.includes('embed'))
    void import('../embed/embedder-thread').then((thread) => thread.sharedEmbedderThread()).catch(() => {});
  if (queues.length > 0)
    void loadRunWorkers()
      .then((workers) => (queues.includes('crawl') ? workers.workflowBundle() : undefined))
      .catch(() => {});
  return { queues, start: startLocalWorkers };
}
