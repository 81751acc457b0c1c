/** Long-running commands: `gleaner dev` (everything, embedded) and `gleaner worker` (some queues). */
import { QUEUE_KINDS, type QueueKind } from '../domain/temporal-names';
import { openRuntime } from '../infra/runtime';

function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => resolve(signal));
  });
}

export async function runDevCommand(): Promise<void> {
  const runtime = await openRuntime({ workerQueues: QUEUE_KINDS, serve: true });
  try {
    process.stderr.write(
      [
        'gleaner dev is running (Ctrl-C to stop)',
        `  Temporal        ${runtime.temporalAddress} (namespace ${runtime.namespace})`,
        ...(runtime.temporalUiUrl ? [`  Temporal Web    ${runtime.temporalUiUrl}`] : []),
        ...(runtime.databaseUrl ? [`  psql            psql "${runtime.databaseUrl}"`] : []),
        `  workers         ${QUEUE_KINDS.join(', ')}`,
        '  other gleaner commands in this folder attach to this process',
        '',
      ].join('\n'),
    );
    await Promise.race([untilSignal(), runtime.workers?.done]);
  } finally {
    await runtime.close();
  }
}

export async function runWorkerCommand(queues: readonly QueueKind[]): Promise<void> {
  const runtime = await openRuntime({ workerQueues: queues });
  try {
    process.stderr.write(`gleaner worker polling ${queues.join(', ')} on ${runtime.temporalAddress}\n`);
    await Promise.race([untilSignal(), runtime.workers?.done]);
  } finally {
    await runtime.close();
  }
}
