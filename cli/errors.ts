/** Errors the user can act on: printed as one line, no stack trace, exit status 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

const USER_FACING = new Set([
  'UsageError',
  'InvalidCrawlSpecError',
  'DatabaseUnavailableError',
  'RuntimeError',
  'StoreLockedError',
  'TemporalBinaryNotFoundError',
  'TemporalConfigError',
  'CrawlFailedError',
  'ManifestLinesFailedError',
  'InterruptedError',
  'EmbeddingSetupError',
  'CrawlIdTakenError',
  'InconsistentStoreError',
  'NoCorpusError',
]);

export function isUserFacing(error: unknown): boolean {
  return error instanceof Error && USER_FACING.has(error.name);
}

/** The crawl ran but produced nothing usable (every seed failed): exit status 1. */
export class CrawlFailedError extends Error {
  override readonly name = 'CrawlFailedError';
}

/** `extract --manifest` ran to the end but some lines failed (each reported on its own line): exit status 1. */
export class ManifestLinesFailedError extends Error {
  override readonly name = 'ManifestLinesFailedError';
}

/** The user stopped the command (Ctrl-C); durable state is intact. Exit status 130. */
export class InterruptedError extends Error {
  override readonly name = 'InterruptedError';
}

/** `gleaner report` found the store inconsistent: exit status 1. */
export class InconsistentStoreError extends Error {
  override readonly name = 'InconsistentStoreError';
}
