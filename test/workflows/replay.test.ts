/**
 * Replays committed workflow histories (test/fixtures/histories, recorded by
 * `npx tsx scripts/record-histories.ts`) against the current workflow code. A failure means a
 * workflow change would break crawls already running: guard the change with `patched()` instead
 * of re-recording. In process, no Temporal server.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  bundleWorkflowCode,
  DefaultLogger,
  Worker,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { beforeAll, describe, expect, it } from 'vitest';
import { WORKFLOW_TYPES } from '../../domain/temporal-names';
import { installTemporalRuntime, workflowBundle } from '../../workers/run-workers';
import { entry, HISTORIES, historyFromJSON, manifest } from './recorded-histories';

const here = path.dirname(fileURLToPath(import.meta.url));
const NONDETERMINISTIC_WORKFLOWS = path.join(here, '..', 'fixtures', 'nondeterministic-workflows.ts');

// The SDK's own logs go through pino at WARN instead of printing every replay worker's state.
installTemporalRuntime();

describe('committed workflow histories', () => {
  it('are all listed in the manifest and cover every workflow type', () => {
    const files = readdirSync(HISTORIES).filter((name) => name.endsWith('.json') && name !== 'manifest.json');
    expect(files.sort()).toEqual(manifest.map((item) => item.file).sort());
    expect(new Set(manifest.map((item) => item.workflowType))).toEqual(
      new Set(Object.values(WORKFLOW_TYPES)),
    );
    for (const item of manifest) {
      const started = historyFromJSON(item.file).events?.[0]?.workflowExecutionStartedEventAttributes;
      expect(started?.workflowType?.name).toBe(item.workflowType);
    }
  });
});

describe('replaying against workflows/index.ts', () => {
  let bundle: WorkflowBundleWithSourceMap;
  beforeAll(async () => {
    bundle = await workflowBundle();
  });

  it.each(manifest)('$file replays without a determinism error', async ({ file, workflowId }) => {
    await expect(
      Worker.runReplayHistory({ workflowBundle: bundle }, historyFromJSON(file), workflowId),
    ).resolves.toBeUndefined();
  });
});

describe('replaying against a changed originWorkflow', () => {
  let bundle: WorkflowBundleWithSourceMap;
  beforeAll(async () => {
    bundle = await bundleWorkflowCode({
      workflowsPath: NONDETERMINISTIC_WORKFLOWS,
      logger: new DefaultLogger('WARN'),
    });
  });

  it('fails the origin history with a DeterminismViolationError', async () => {
    const { file, workflowId } = entry('origin-primary.json');
    const replay = Worker.runReplayHistory({ workflowBundle: bundle }, historyFromJSON(file), workflowId);
    await expect(replay).rejects.toBeInstanceOf(DeterminismViolationError);
    await expect(replay).rejects.toThrow(/nondeterminism/i);
  });

  it('still replays the page history (the bundle itself is sound)', async () => {
    const { file, workflowId } = entry('page.json');
    await expect(
      Worker.runReplayHistory({ workflowBundle: bundle }, historyFromJSON(file), workflowId),
    ).resolves.toBeUndefined();
  });
});
