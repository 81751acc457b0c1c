// Entry of a page-analysis worker thread: the TypeScript body comes compiled or through tsx
// (infra/thread-body.mjs).
import { importThreadBody } from '../infra/thread-body.mjs';

const { analysePage, prepareAnalysis } = await importThreadBody(
  new URL('./page-analysis.ts', import.meta.url),
);
const { markTaskStarted } = await importThreadBody(new URL('./thread-deadline.ts', import.meta.url));

/** The deadline runs from here: the thread's one-time setup (the tokenizer) is not the page's cost. */
export default async function analysePageTask(task) {
  await prepareAnalysis();
  markTaskStarted(task);
  return analysePage(task.input);
}

/**
 * Starts a thread: for tasks left queued behind a stopped one (thread-deadline.ts), and at worker
 * start (`warmPageAnalysisPool`), where it also does the one-time setup, so the first page batch
 * does not wait for either.
 */
export async function wake() {
  await prepareAnalysis();
}
