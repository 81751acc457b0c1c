/**
 * Replays committed workflow histories (test/fixtures/histories, recorded by
 * `npx tsx scripts/record-histories.ts`) against the current workflow code. A failure means a
 * workflow change would break crawls already running: guard the change with `patched()` instead
 * of re-recording. In process, no Temporal server.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { temporal } from '@temporalio/proto';
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

const here = path.dirname(fileURLToPath(import.meta.url));
const HISTORIES = path.join(here, '..', 'fixtures', 'histories');
const NONDETERMINISTIC_WORKFLOWS = path.join(here, '..', 'fixtures', 'nondeterministic-workflows.ts');

interface ManifestEntry {
  file: string;
  workflowId: string;
  workflowType: string;
}

// The SDK's own logs go through pino at WARN instead of printing every replay worker's state.
installTemporalRuntime();

const manifest = JSON.parse(readFileSync(path.join(HISTORIES, 'manifest.json'), 'utf8')) as ManifestEntry[];

/**
 * `historyFromJSON` of `@temporalio/common/lib/proto-utils`, but parsed with the protobufjs copy
 * that `@temporalio/proto` was built with: npm installs a separate protobufjs under each
 * @temporalio package here, and the SDK's own function then throws "type must be a Type".
 */
function historyFromJSON(file: string): temporal.api.history.v1.IHistory {
  const require = createRequire(import.meta.url);
  const proto = require('@temporalio/proto') as typeof import('@temporalio/proto');
  const { patchProtobufRoot } = require('@temporalio/proto/lib/patch-protobuf-root') as {
    patchProtobufRoot: (root: unknown) => { lookupType(name: string): unknown };
  };
  const { fromJson } = createRequire(require.resolve('@temporalio/proto'))('protobufjs/ext/protojson') as {
    fromJson(type: unknown, json: unknown, options: { ignoreUnknownFields: boolean }): unknown;
  };
  const historyType = patchProtobufRoot(proto).lookupType('temporal.api.history.v1.History');
  const json: unknown = JSON.parse(readFileSync(path.join(HISTORIES, file), 'utf8'));
  return fromJson(historyType, json, { ignoreUnknownFields: true }) as temporal.api.history.v1.IHistory;
}

function entry(file: string): ManifestEntry {
  const found = manifest.find((candidate) => candidate.file === file);
  if (!found) throw new Error(`${file} is not in manifest.json`);
  return found;
}

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
