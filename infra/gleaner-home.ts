/**
 * Where the embedded default keeps its state, and the error its commands raise. Kept apart from
 * infra/runtime.ts so that store-only commands (`search`, `status`, `export`) need not load the
 * Temporal client and workers just to find the folder: that import alone took ~2 s of a cold search.
 */
import path from 'node:path';

export function gleanerHome(): string {
  return path.resolve(process.env.GLEANER_HOME ?? '.gleaner');
}

export class RuntimeError extends Error {
  override readonly name = 'RuntimeError';
}
