/**
 * Records an idle origin's continued run that found the crawl's batch before its first workflow task
 * (testbed/idle-batch-at-start.ts), for `test/workflows/replay.test.ts`:
 *
 *   npx tsx scripts/record-idle-batch-history.ts FILE
 *
 * `origin-idle-batch-stuck.json` was recorded on the code before `idle-after-every-batch-v1`: the run
 * fetched the batch and sent no idle report. `origin-idle-batch.json` was recorded after it: the run
 * records `origin-patches-merged-v3` and reports idle once it has fetched the batch.
 */
import { WORKFLOW_TYPES } from '../domain/temporal-names';
import { runIdleBatchAtStart } from '../testbed/idle-batch-at-start';
import { replaceInManifest, withRecordingStack, writeHistory } from './lib/record-history';

const file = process.argv[2];
if (!file?.endsWith('.json')) throw new Error('usage: record-idle-batch-history.ts FILE.json');

await withRecordingStack([], async (stack) => {
  const outcome = await runIdleBatchAtStart(stack, 'history-fixture-idle-batch', 3_000);
  if (outcome.requested.join() !== '/late') {
    throw new Error(`unexpected outcome, not recording: ${JSON.stringify(outcome.requested)}`);
  }
  const entry = { file, workflowId: outcome.workflowId, workflowType: WORKFLOW_TYPES.origin };
  replaceInManifest(writeHistory(entry, outcome.history, `, ${outcome.idleReports} idle report(s)`));
});
