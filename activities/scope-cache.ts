/** A crawl's scope predicate from its spec, and a cache of them per crawl for one worker's activities. */

import { ApplicationFailure } from '@temporalio/activity';
import { compileScope, type ScopePredicate, ScopeSpecError } from '../domain/scope';
import type { FetchSpec } from './types';

/** Compiles the spec's scope; a bad scope is bad input, so its failure is never retried. */
export function compileSpecScope(spec: FetchSpec): ScopePredicate {
  try {
    return compileScope({
      mode: spec.scope,
      seeds: spec.seeds,
      domains: spec.domains,
      includePrefixes: spec.includePrefixes,
      excludePatterns: spec.exclude,
    });
  } catch (error) {
    if (error instanceof ScopeSpecError) throw ApplicationFailure.nonRetryable(error.message, error.name);
    throw error;
  }
}

export function createScopeCache(): (crawlId: string, spec: FetchSpec) => ScopePredicate {
  const scopes = new Map<string, ScopePredicate>();
  return (crawlId, spec) => {
    let predicate = scopes.get(crawlId);
    if (!predicate) {
      predicate = compileSpecScope(spec);
      // Bounded: a long-lived worker serves many crawls.
      if (scopes.size > 100) scopes.clear();
      scopes.set(crawlId, predicate);
    }
    return predicate;
  };
}
