/** `gleaner pause|resume|cancel <crawlId> [--origin O]`: operator control through the crawl's signal. */
import { WorkflowNotFoundError } from '@temporalio/client';
import { crawlWorkflowId } from '../domain/temporal-names';
import { canonicalizeUrl, originOf } from '../domain/url';
import { openRuntime } from '../infra/runtime';
import { type ControlCommand, controlSignal } from '../workflows/messages';
import { UsageError } from './errors';

export async function runControlCommand(
  action: ControlCommand['action'],
  crawlId: string,
  options: { origin?: string; reason?: string },
): Promise<void> {
  let origin: string | undefined;
  if (options.origin) {
    const url = canonicalizeUrl(options.origin);
    if (!url) throw new UsageError(`not a valid http(s) origin: ${options.origin}`);
    origin = originOf(url);
  }
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
