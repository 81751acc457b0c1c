/**
 * The one test a URL passes before it is claimed for a crawl, whichever way it was found (a link
 * on a fetched page, a sitemap, a page already in the store): in the crawl's scope, none of the
 * URLs the crawler leaves alone by default, and within its trap family's budget.
 */
import { hasNonPageExtension } from './page-filter';
import { isDeniedByDefault, type ScopePredicate } from './scope';
import { TrapBudget, trapReason } from './traps';

/**
 * One trap budget per compiled scope, i.e. per crawl in one worker process (the activities cache a
 * crawl's scope; `scope-cache.ts`), dropped with it. Held in memory, so the bound is per worker
 * process and starts again after a restart: it bounds a trap's requests by a small multiple of the
 * family budget, never to zero.
 */
const budgets = new WeakMap<ScopePredicate, TrapBudget>();

export function isCrawlable(url: string, inScope: ScopePredicate): boolean {
  if (!inScope(url) || isDeniedByDefault(url) || hasNonPageExtension(url) || trapReason(url) !== undefined)
    return false;
  let budget = budgets.get(inScope);
  if (budget === undefined) {
    budget = new TrapBudget();
    budgets.set(inScope, budget);
  }
  return budget.admit(url);
}
