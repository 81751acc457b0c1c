/**
 * The trap budget (domain/traps.ts) of each crawl in this worker process, spent by the links a
 * fetched page offers. Sitemaps and pages already in the store are lists a site published or a
 * crawl already took, not links a generator can grow without end, so they do not spend it: a
 * sitemap of 100 dated event pages is 100 real pages.
 *
 * Held in memory per compiled scope (the activities cache one per crawl, scope-cache.ts) and
 * dropped with it, so the bound holds per worker process and starts again after a restart: a trap
 * family draws a small multiple of its budget, never an unbounded number.
 */
import type { ScopePredicate } from '../domain/scope';
import { TrapBudget } from '../domain/traps';

const budgets = new WeakMap<ScopePredicate, TrapBudget>();

/** True when `url` may be followed: it is in no trap family, or its family still has room. */
export function admitLink(url: string, inScope: ScopePredicate): boolean {
  let budget = budgets.get(inScope);
  if (budget === undefined) {
    budget = new TrapBudget();
    budgets.set(inScope, budget);
  }
  return budget.admit(url);
}
