// Entry of a fetched-HTML worker thread (see page-analysis-pool.ts). Worker threads do not inherit
// the parent's TypeScript loader, so the thread registers tsx itself before importing TypeScript.
import { register } from 'tsx/esm/api';

register();
const { readFetchedHtml, renderAssessment } = await import('./fetched-html.ts');
const { markTaskStarted } = await import('./thread-deadline.ts');

export default function readFetchedHtmlTask(task) {
  markTaskStarted(task);
  return readFetchedHtml(task.input);
}

export function renderAssessmentTask(task) {
  markTaskStarted(task);
  return renderAssessment(task.input);
}

/** A no-op that only starts a thread for tasks left queued behind a stopped one (thread-deadline.ts). */
export function wake() {}
