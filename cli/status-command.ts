/** `gleaner status <crawlId>`: live progress while running, the summary once finished. */
import { WorkflowNotFoundError } from '@temporalio/client';
import { crawlWorkflowId } from '../domain/temporal-names';
import { openRuntime } from '../infra/runtime';
import { crawlProgressQuery } from '../workflows/messages';
import { UsageError } from './errors';

export async function runStatusCommand(crawlId: string, options: { json?: boolean }): Promise<void> {
  const runtime = await openRuntime({});
  try {
    const handle = runtime.client.workflow.getHandle(crawlWorkflowId(crawlId));
    const description = await handle.describe().catch((error: unknown) => {
      if (error instanceof WorkflowNotFoundError) throw new UsageError(`no crawl with id ${crawlId}`);
      throw error;
    });
    const status = description.status.name;
    const report =
      status === 'RUNNING'
        ? { crawlId, status, progress: await handle.query(crawlProgressQuery) }
        : status === 'COMPLETED'
          ? { crawlId, status, summary: await handle.result() }
          : { crawlId, status };
    if (options.json) {
      process.stdout.write(`${JSON.stringify(report)}\n`);
      return;
    }
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } finally {
    await runtime.close();
  }
}
