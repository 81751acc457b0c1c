/** Workers run inside a CLI process (the embedded default, `gleaner dev`, `gleaner worker`). */
import type { QueueKind } from '../domain/temporal-names';
import type { RuntimeOptions, WorkerStarter } from '../infra/runtime';

// Loaded on first use: the Temporal worker is a heavy import that commands without workers skip.
const startLocalWorkers: WorkerStarter = async (options) =>
  (await import('../workers/run-workers')).startWorkers(options);

/** openRuntime's `workers` option for these queues (none when the list is empty). */
export function inProcessWorkers(queues: readonly QueueKind[]): RuntimeOptions['workers'] {
  return { queues, start: startLocalWorkers };
}
