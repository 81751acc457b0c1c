// Entry of a fetched-HTML worker thread (see page-analysis-pool.ts): the TypeScript body comes
// compiled or through tsx (infra/thread-body.mjs).
import { importThreadBody } from '../infra/thread-body.mjs';

const { readFetchedHtml, readFetchedDocument, renderAssessment } = await importThreadBody(
  new URL('./fetched-html.ts', import.meta.url),
);
const { markTaskStarted } = await importThreadBody(new URL('./thread-deadline.ts', import.meta.url));

export default function readFetchedHtmlTask(task) {
  markTaskStarted(task);
  return readFetchedHtml(task.input);
}

export function readFetchedDocumentTask(task) {
  markTaskStarted(task);
  return readFetchedDocument(task.input);
}

export function renderAssessmentTask(task) {
  markTaskStarted(task);
  return renderAssessment(task.input);
}

/** A no-op that only starts a thread for tasks left queued behind a stopped one (thread-deadline.ts). */
export function wake() {}
