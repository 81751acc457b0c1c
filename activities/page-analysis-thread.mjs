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

/** A no-op that only starts a thread for tasks left queued behind a stopped one (thread-deadline.ts). */
export function wake() {}
