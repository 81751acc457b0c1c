/** Compiled scope predicates per crawl, kept for the activities of one worker (fetch and render). */

import { compileScope, type ScopePredicate } from '../domain/scope';
import type { FetchSpec } from './types';

export function createScopeCache(): (crawlId: string, spec: FetchSpec) => ScopePredicate {
  const scopes = new Map<string, ScopePredicate>();
  return (crawlId, spec) => {
    let predicate = scopes.get(crawlId);
    if (!predicate) {
      predicate = compileScope({
        mode: spec.scope,
        seeds: spec.seeds,
        domains: spec.domains,
        includePrefixes: spec.includePrefixes,
        excludePatterns: spec.exclude,
      });
      // Bounded: a long-lived worker serves many crawls.
      if (scopes.size > 100) scopes.clear();
      scopes.set(crawlId, predicate);
    }
    return predicate;
  };
}
