/**
 * What the crawl workflow's older paths (workflows/crawl-generations.ts) mean to replay: each is
 * dropped in turn (its patch deprecated, as a removal would leave it, test/workflows/dropped-paths/)
 * and the recorded crawl histories replayed against what is left. In process, no Temporal server.
 *
 * The crawl-many-origins-*.json histories were recorded on 74e18ae with the older generation forced
 * for the first run (40 one-page origins, each linking to a page of the next), so they carry what a
 * crawl begun before each patch did with many origins at once.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  bundleWorkflowCode,
  DefaultLogger,
  Worker,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { describe, expect, it } from 'vitest';
import { installTemporalRuntime } from '../../workers/run-workers';
import { entry, historyFromJSON } from './recorded-histories';

const DROPPED_PATHS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'dropped-paths');

installTemporalRuntime();

/** Replays histories against the crawl workflow of `workflowsFile`: each one's failure, if any. */
async function replayer(workflowsFile: string): Promise<(historyFile: string) => Promise<unknown>> {
  const workflowBundle = await bundleWorkflowCode({
    workflowsPath: path.join(DROPPED_PATHS, workflowsFile),
    logger: new DefaultLogger('WARN'),
  });
  return (historyFile) => replayOne(workflowBundle, historyFile);
}

function replayOne(workflowBundle: WorkflowBundleWithSourceMap, historyFile: string): Promise<unknown> {
  const { workflowId } = entry(historyFile);
  return Worker.runReplayHistory({ workflowBundle }, historyFromJSON(historyFile), workflowId).then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe('the path before crawl-quota-first-v1', () => {
  it('is needed by crawl-many-origins-chunked.json: without it, reports jump ahead of child starts', async () => {
    const replay = await replayer('without-unpacked.ts');
    const failure = await replay('crawl-many-origins-chunked.json');
    expect(failure).toBeInstanceOf(DeterminismViolationError);
    expect(String(failure)).toMatch(/nondeterminism/i);
    expect(await replay('crawl-many-origins-quota-first.json')).toBeUndefined();
    expect(await replay('crawl.v8.json')).toBeUndefined();
  });
});

describe('the paths before crawl-concurrent-effects-v1 and crawl-finish-turns-v1', () => {
  // Replay compares commands in order, not how they are grouped into workflow tasks: one command per
  // task (before concurrent effects) and the same finish signals sent at once (before finish turns,
  // with fewer origins than a turn holds) look alike to it. They are kept for running crawls, whose
  // continue-as-new check would land elsewhere without them (crawl-generations.ts).
  it('issue the same commands in the same order on every recorded history that takes them', async () => {
    const withoutOneByOne = await replayer('without-one-by-one.ts');
    for (const file of ['crawl-many-origins-one-by-one.json', 'crawl.v1.json', 'crawl.v6.json']) {
      expect(await withoutOneByOne(file), file).toBeUndefined();
    }
    const withoutFinishAtOnce = await replayer('without-finish-at-once.ts');
    for (const file of ['crawl-many-origins-quota-first.json', 'crawl.v8.json', 'crawl-finish.json']) {
      expect(await withoutFinishAtOnce(file), file).toBeUndefined();
    }
  });
});

describe('the path before crawl-finish-window-v1', () => {
  // The 80-origin finish recordings tell 25 origins a turn, so the window of 64 holds none back in
  // them: every finish history replays with the window forced. The unbounded path stays for crawls
  // that were finishing more than 64 origins when the window came (crawl-generations.ts).
  it('issues the same commands as the window on every finish history recorded', async () => {
    const replay = await replayer('without-unbounded-finish.ts');
    for (const file of [
      'crawl-finish-start.json',
      'crawl-finish.json',
      'crawl-finish-window-start.json',
      'crawl-finish-window.json',
    ]) {
      expect(await replay(file), file).toBeUndefined();
    }
  });
});
