/**
 * `gleaner resume <crawlId> [--origin O]`: lifts an operator pause (the crawl's control signal)
 * and, on the embedded default, also runs the workers here and follows the crawl to its end, so a
 * crawl whose process was stopped (Ctrl-C, kill -9, a reboot) continues where it was. With
 * TEMPORAL_ADDRESS set the workers run elsewhere, and resume only sends the signal.
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import { crawlWorkflowId, QUEUE_KINDS } from '../domain/temporal-names';
import { openRuntime, type Runtime } from '../infra/runtime';
import { storedCrawlStatus } from '../infra/start-crawl';
import { controlSignal } from '../workflows/messages';
import { followCrawl } from './crawl-command';
import { UsageError } from './errors';
import { inProcessWorkers } from './local-workers';
import { originOption } from './options';

export async function runResumeCommand(
  crawlId: string,
  options: { origin?: string; json?: boolean; localWorkers?: boolean },
): Promise<void> {
  const origin = originOption(options.origin);
  const configured = Boolean(process.env.TEMPORAL_ADDRESS);
  const follow = origin === undefined && (options.localWorkers ?? !configured);
  let runtime: Runtime | undefined;
  try {
    runtime = await openRuntime({ workers: inProcessWorkers(follow ? QUEUE_KINDS : []) });
    const stored = await storedCrawlStatus(runtime.db, crawlId);
    if (stored !== undefined && stored !== 'running') {
      throw new UsageError(`crawl ${crawlId} has already finished (${stored}); there is nothing to resume`);
    }
    const handle = runtime.client.workflow.getHandle(crawlWorkflowId(crawlId));
    const description = await handle.describe().catch((error: unknown) => {
      if (error instanceof WorkflowNotFoundError) throw new UsageError(`no crawl with id ${crawlId}`);
      throw error;
    });
    if (description.status.name !== 'RUNNING') {
      throw new UsageError(
        `crawl ${crawlId} has already finished (${description.status.name.toLowerCase()}); there is nothing to resume`,
      );
    }
    await handle.signal(controlSignal, { action: 'resume', ...(origin ? { origin } : {}) });
    if (!runtime.workers) {
      process.stderr.write(`resume sent to crawl ${crawlId}${origin ? ` for ${origin}` : ''}\n`);
      return;
    }
    if (!options.json) process.stderr.write(`crawl ${crawlId}: resuming where it stopped\n`);
    await followCrawl(runtime, handle, crawlId, options.json === true);
  } finally {
    await runtime?.close();
  }
}
