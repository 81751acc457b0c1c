/**
 * The one test a URL passes before it is claimed for a crawl, whichever way it was found (a link
 * on a fetched page, a sitemap, a page already in the store): in the crawl's scope and none of
 * the URLs the crawler leaves alone by default.
 */
import { hasNonPageExtension, isMachineFile, isSphinxSourceTwin } from './page-filter';
import { isDeniedByDefault, type ScopePredicate } from './scope';
import { trapReason } from './traps';

/** `contentTypes`: the crawl's (spec `contentTypes`); a `.pdf` URL is crawlable when it names `pdf`. */
export function isCrawlable(
  url: string,
  inScope: ScopePredicate,
  contentTypes: readonly string[] = [],
): boolean {
  return inScope(url) && !hasNonPageExtension(url, contentTypes) && !isLeftAlone(url);
}

/**
 * The URLs the crawler leaves alone whatever they would answer: login/cart-style paths, an origin's
 * machine files, Sphinx source twins and traps. A redirect from a found page is not followed there
 * either; a file extension is not judged on a redirect, whose answer the content type rules.
 */
export function isLeftAlone(url: string): boolean {
  return (
    isDeniedByDefault(url) || isSphinxSourceTwin(url) || isMachineFile(url) || trapReason(url) !== undefined
  );
}
