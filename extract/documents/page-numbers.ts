/** PDF page numbers of a span of Markdown lines, for chunk metadata (`MarkdownChunk.startLine`/`endLine`). */
import type { PageStart } from './types';

/**
 * First and last page a span of 1-based Markdown lines covers, from a PDF's {@link PageStart}s;
 * undefined when the span lies before the first page start (a title the normaliser added).
 */
export function pagesOfLines(
  pageStarts: readonly PageStart[],
  startLine: number,
  endLine: number,
): { first: number; last: number } | undefined {
  const pageAt = (line: number): number | undefined => {
    // Binary search: the last page start at or before `line`.
    let low = 0;
    let high = pageStarts.length - 1;
    let found: number | undefined;
    while (low <= high) {
      const mid = (low + high) >> 1;
      const start = pageStarts[mid] as PageStart;
      if (start.line <= line) {
        found = start.page;
        low = mid + 1;
      } else high = mid - 1;
    }
    return found;
  };
  const last = pageAt(endLine);
  if (last === undefined) return undefined;
  return { first: pageAt(startLine) ?? (pageStarts[0] as PageStart).page, last };
}
