/** `gleaner pause|resume|cancel <crawlId> [--origin O]`: operator control through the crawl's signal. */
import { WorkflowNotFoundError } from '@temporalio/client';
import { crawlWorkflowId } from '../domain/temporal-names';
import { openRuntime } from '../infra/runtime';
import { type ControlCommand, controlSignal } from '../workflows/messages';
import { UsageError } from './errors';
import { originOption } from './options';

export async function runControlCommand(
  action: ControlCommand['action'],
  crawlId: string,
  options: { origin?: string; reason?: string },
): Promise<void> {
  const origin = originOption(options.origin);
  const runtime = await openRuntime({});
  try {
    const handle = runtime.client.workflow.getHandle(crawlWorkflowId(crawlId));
    await handle
      .signal(controlSignal, {
        action,
        ...(origin ? { origin } : {}),
        ...(options.reason ? { reason: options.reason } : {}),
      })
      .catch((error: unknown) => {
        if (error instanceof WorkflowNotFoundError)
          throw new UsageError(`no running crawl with id ${crawlId}`);
        throw error;
      });
    process.stderr.write(`${action} sent to crawl ${crawlId}${origin ? ` for ${origin}` : ''}\n`);
  } finally {
    await runtime.close();
  }
}
