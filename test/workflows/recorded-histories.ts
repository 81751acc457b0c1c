/**
 * The committed workflow histories (test/fixtures/histories, recorded by
 * `npx tsx scripts/record-histories.ts`) and their manifest, read for replay tests.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { temporal } from '@temporalio/proto';

export const HISTORIES = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  'fixtures',
  'histories',
);

export interface ManifestEntry {
  file: string;
  workflowId: string;
  workflowType: string;
}

export const manifest = JSON.parse(
  readFileSync(path.join(HISTORIES, 'manifest.json'), 'utf8'),
) as ManifestEntry[];

export function entry(file: string): ManifestEntry {
  const found = manifest.find((candidate) => candidate.file === file);
  if (!found) throw new Error(`${file} is not in manifest.json`);
  return found;
}

/**
 * `historyFromJSON` of `@temporalio/common/lib/proto-utils`, but parsed with the protobufjs copy
 * that `@temporalio/proto` was built with: npm installs a separate protobufjs under each
 * @temporalio package here, and the SDK's own function then throws "type must be a Type".
 */
export function historyFromJSON(file: string): temporal.api.history.v1.IHistory {
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
