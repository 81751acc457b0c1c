/**
 * Workflow history → proto3 JSON (as `temporal workflow show --output json` writes it), with the
 * protobufjs copy `@temporalio/proto` was built with (see scripts/record-histories.ts for why the
 * SDK's own `historyToJSON` cannot be used in this install).
 */
import { createRequire } from 'node:module';
import type { temporal } from '@temporalio/proto';

export function historyToJSON(history: temporal.api.history.v1.IHistory): string {
  const require = createRequire(import.meta.url);
  const proto = require('@temporalio/proto') as typeof import('@temporalio/proto');
  const { patchProtobufRoot } = require('@temporalio/proto/lib/patch-protobuf-root') as {
    patchProtobufRoot: (root: unknown) => { lookupType(name: string): unknown };
  };
  const { toJson } = createRequire(require.resolve('@temporalio/proto'))('protobufjs/ext/protojson') as {
    toJson(type: unknown, message: unknown): unknown;
  };
  const historyType = patchProtobufRoot(proto).lookupType('temporal.api.history.v1.History');
  return JSON.stringify(
    toJson(historyType, proto.temporal.api.history.v1.History.fromObject(history)),
    null,
    2,
  );
}
