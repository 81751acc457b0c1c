/** Workers run inside a CLI process (the embedded default, `gleaner dev`, `gleaner worker`). */
import type { QueueKind } from '../domain/temporal-names';
import type { RuntimeOptions, WorkerStarter } from '../infra/runtime';

// Loaded on first use: the Temporal worker is a heavy import that commands without workers skip.
const startLocalWorkers: WorkerStarter = async (options) => {
  // The model loads (its ONNX session on native threads) while the workers are created, instead of
  // when the first page reaches the embed queue. A failure here is the embed activity's to report.
  if (options.queues.includes('embed')) {
    void import('../embed/embedder').then((embedder) => embedder.loadDefaultEmbedder()).catch(() => {});
  }
  return (await import('../workers/run-workers')).startWorkers(options);
};

/** openRuntime's `workers` option for these queues (none when the list is empty). */
export function inProcessWorkers(queues: readonly QueueKind[]): RuntimeOptions['workers'] {
  return { queues, start: startLocalWorkers };
}
