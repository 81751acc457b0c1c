// Entry of a fetched-HTML worker thread (see page-analysis-pool.ts): the TypeScript body comes
// compiled or through tsx (infra/thread-body.mjs).
import { importThreadBody } from '../infra/thread-body.mjs';

const { readFetchedHtml, renderAssessment } = await importThreadBody(
  new URL('./fetched-html.ts', import.meta.url),
);
const { markTaskStarted } = await importThreadBody(new URL('./thread-deadline.ts', import.meta.url));

export default function readFetchedHtmlTask(task) {
  markTaskStarted(task);
  return readFetchedHtml(task.input);
}

/** Loaded on the first document: the converters stay out of threads that only ever read HTML. */
let documentBody;

export async function readFetchedDocumentTask(task) {
  markTaskStarted(task);
  documentBody ??= importThreadBody(new URL('./fetched-document.ts', import.meta.url));
  const { readFetchedDocument } = await documentBody;
  return readFetchedDocument(task.input);
}

export function renderAssessmentTask(task) {
  markTaskStarted(task);
  return renderAssessment(task.input);
}

/** A no-op that only starts a thread for tasks left queued behind a stopped one (thread-deadline.ts). */
export function wake() {}
