/**
 * The text content of each tool's answer: what the model reads. Every passage carries its full URL
 * in the text (clients that drop `structuredContent` still let the model cite), and long answers say
 * how to get the rest.
 */
import type { SearchHit, SearchOutcome } from '../search/hybrid-search';
import type { Sources, StoredCrawlStatus, StoredPage } from './corpus-reads';
import type { LiveProgress } from './live-progress';

export interface Passage {
  /** The citation number, [n]. */
  n: number;
  title: string | null;
  url: string;
  headingPath: string[];
  score: number;
  text: string;
  pageId: number;
  chunkId: number;
  /** A PDF passage's pages (1-based), so the model can cite them. */
  pageFirst?: number;
  pageLast?: number;
}

export function passagesOf(hits: readonly SearchHit[]): Passage[] {
  return hits.map((hit, i) => ({
    n: i + 1,
    title: hit.title,
    url: hit.url,
    headingPath: hit.headingPath,
    score: Number(hit.score.toFixed(6)),
    text: hit.text,
    pageId: hit.pageId,
    chunkId: hit.chunkId,
    ...(hit.pageFirst !== undefined
      ? { pageFirst: hit.pageFirst, pageLast: hit.pageLast ?? hit.pageFirst }
      : {}),
  }));
}

export function formatPassages(query: string, outcome: SearchOutcome, passages: readonly Passage[]): string {
  const notes = outcome.notes.map((note) => `Note: ${note}`);
  if (passages.length === 0) {
    return [
      ...notes,
      `No passages found for "${query}". Try other words, or list_sources to see what is indexed.`,
    ].join('\n');
  }
  const blocks = passages.map((p) =>
    [
      `[${p.n}] ${p.title ?? '(untitled)'}`,
      `URL: ${p.url}`,
      ...(p.headingPath.length > 0 ? [`Section: ${p.headingPath.join(' > ')}`] : []),
      ...(p.pageFirst !== undefined
        ? [
            `Pages: ${p.pageLast !== undefined && p.pageLast !== p.pageFirst ? `${p.pageFirst}-${p.pageLast}` : p.pageFirst}`,
          ]
        : []),
      `Score: ${p.score.toFixed(4)}`,
      '',
      p.text.trim(),
    ].join('\n'),
  );
  const head = `${passages.length} passage${passages.length === 1 ? '' : 's'} for "${query}" (${outcome.mode} search); cite as [n] with the URL.`;
  return [...notes, head, '', blocks.join('\n\n---\n\n')].join('\n');
}

export function formatPage(
  page: StoredPage,
  part: string,
  at: { offset: number; end: number; nextOffset: number | null },
): string {
  const total = page.markdown?.length ?? 0;
  const lines = [
    `Title: ${page.title ?? '(untitled)'}`,
    `URL: ${page.url}`,
    ...(page.finalUrl !== page.url ? [`Served from: ${page.finalUrl}`] : []),
    `Fetched: ${page.fetchedAt ?? 'unknown'}`,
    `Content SHA-256: ${page.contentSha256 ?? 'unknown'}`,
    ...(page.summary ? [`Summary: ${page.summary}`] : []),
    ...(page.tags.length > 0 ? [`Tags: ${page.tags.map((t) => `#${t}`).join(' ')}`] : []),
    ...(page.duplicateOf ? [`Duplicate of: ${page.duplicateOf}`] : []),
    total === 0
      ? 'Markdown: none stored for this page (not an HTML document, or not extracted yet)'
      : at.offset === 0 && at.nextOffset === null
        ? `Markdown: ${total} characters`
        : `Markdown: characters ${at.offset}-${at.end} of ${total}`,
    '',
    part,
  ];
  if (at.nextOffset !== null) {
    lines.push(
      '',
      `[Continues: ${total - at.end} more characters. Call fetch_page with {"url": "${page.url}", "offset": ${at.nextOffset}} for the next part.]`,
    );
  }
  return lines.join('\n');
}

export function formatSources(sources: Sources): string {
  if (sources.origins.length === 0 && sources.crawls.length === 0)
    return 'The corpus is empty: nothing has been crawled yet.';
  const lines = [
    sources.originsTotal > sources.origins.length
      ? `Origins (${sources.origins.length} largest of ${sources.originsTotal}):`
      : `Origins (${sources.origins.length}):`,
  ];
  for (const o of sources.origins)
    lines.push(
      `- ${o.origin}: ${o.pages} page${o.pages === 1 ? '' : 's'}, last fetched ${o.lastFetchedAt ?? 'never'}`,
    );
  lines.push('', `Crawls (${sources.crawls.length} newest of ${sources.crawlsTotal}):`);
  for (const c of sources.crawls) {
    lines.push(
      `- ${c.crawlId}: ${c.status}, ${c.pages} page${c.pages === 1 ? '' : 's'}, started ${c.startedAt}` +
        `${c.finishedAt ? `, finished ${c.finishedAt}` : ''}; seeds ${c.seeds.join(' ') || '(none)'}`,
    );
  }
  return lines.join('\n');
}

export function formatCrawlStatus(
  crawlId: string,
  stored: StoredCrawlStatus | undefined,
  live: LiveProgress | undefined,
): string {
  const lines: string[] = [];
  if (stored) {
    lines.push(
      `Crawl ${crawlId}: ${stored.status}`,
      `Seeds: ${stored.seeds.join(' ') || '(none)'}`,
      `Started: ${stored.startedAt}${stored.finishedAt ? `; finished ${stored.finishedAt}` : ''}`,
      `Pages fetched: ${stored.pagesFetched}; indexed: ${stored.pagesIndexed}; URLs discovered: ${stored.urlsDiscovered}`,
    );
    if (stored.summary) lines.push(`Summary: ${JSON.stringify(stored.summary)}`);
  } else {
    lines.push(
      `Crawl ${crawlId}: ${live?.workflowStatus?.toLowerCase() ?? 'unknown'} (not yet recorded in the store)`,
    );
  }
  const progress = live?.progress;
  if (progress) {
    const t = progress.totals;
    lines.push(
      `Live: phase ${progress.phase}, ${progress.origins.length} origin(s), fetched ${t.fetched}, indexed ${t.indexed}, ` +
        `errors ${t.errors}, robots-blocked ${t.robotsBlocked}, page budget left ${progress.pageBudgetLeft}` +
        `${progress.paused.length > 0 ? `, paused: ${progress.paused.join(' ')}` : ''}`,
    );
  }
  if (live?.note) lines.push(`Note: ${live.note}`);
  return lines.join('\n');
}
