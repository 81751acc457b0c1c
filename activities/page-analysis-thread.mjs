// Entry of a page-analysis worker thread. Worker threads do not inherit the parent's TypeScript
// loader, so the thread registers tsx itself before importing the TypeScript module.
import { register } from 'tsx/esm/api';

register();
const { analysePage, prepareAnalysis } = await import('./page-analysis.ts');
const { markTaskStarted } = await import('./thread-deadline.ts');

/** The deadline runs from here: the thread's one-time setup (the tokenizer) is not the page's cost. */
export default async function analysePageTask(task) {
  await prepareAnalysis();
  markTaskStarted(task);
  return analysePage(task.input);
}

/** A no-op that only starts a thread for tasks left queued behind a stopped one (thread-deadline.ts). */
export function wake() {}
