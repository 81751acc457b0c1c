/**
 * The one test a URL passes before it is claimed for a crawl, whichever way it was found (a link
 * on a fetched page, a sitemap, a page already in the store): in the crawl's scope and none of
 * the URLs the crawler leaves alone by default.
 */
import { hasNonPageExtension, isSphinxSourceTwin } from './page-filter';
import { isDeniedByDefault, type ScopePredicate } from './scope';
import { trapReason } from './traps';

/** `contentTypes`: the crawl's (spec `contentTypes`); a `.pdf` URL is crawlable when it names `pdf`. */
export function isCrawlable(
  url: string,
  inScope: ScopePredicate,
  contentTypes: readonly string[] = [],
): boolean {
  return (
    inScope(url) &&
    !isDeniedByDefault(url) &&
    !hasNonPageExtension(url, contentTypes) &&
    !isSphinxSourceTwin(url) &&
    trapReason(url) === undefined
  );
}
