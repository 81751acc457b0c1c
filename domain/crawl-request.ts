/**
 * The one way a request becomes a crawl spec, below every entry point: `gleaner crawl`,
 * `gleaner schedule create`, `POST /crawls` and `POST /schedules`. Requests use the spec's own
 * field names (the CLI maps its flags to them once, in cli/crawl-flags.ts); every problem is an
 * InvalidCrawlSpecError naming the field, which each entry point words for its users.
 */
import {
  type CrawlSpec,
  type CrawlSpecInput,
  type CrawlSpecIssue,
  InvalidCrawlSpecError,
  parseCrawlSpec,
} from './crawl-spec';
import { domainProblem, excludePatternProblem, includePrefixProblem } from './scope';
import { canonicalizeUrl } from './url';
import { notifyAddressProblem } from './webhook-events';

/** A crawl request: the spec's fields, its id optional (the caller supplies one when it is absent). */
export type CrawlRequest = CrawlSpecInput;

/**
 * Checks what the schema alone cannot (seeds are http(s) URLs, `scope: 'domains'` names a domain, the
 * scope's domains, prefixes and exclude patterns compile, no webhook receiver is an address the SSRF
 * guard refuses),
 * then validates and fills defaults. `crawlId` is used when the request carries none.
 */
export function buildCrawlSpec(given: CrawlRequest, crawlId: string): CrawlSpec {
  const issues: CrawlSpecIssue[] = [];
  // Domains mean nothing outside the 'domains' scope: a request that names some and no scope wants
  // that scope (before, `--domain x` alone crawled the seed's origin only and said nothing), and
  // one that names another scope is asking for two things at once.
  const namesDomains = Array.isArray(given.domains) && given.domains.length > 0;
  const request: CrawlRequest =
    namesDomains && given.scope === undefined ? { ...given, scope: 'domains' } : given;
  if (namesDomains && request.scope !== 'domains' && typeof request.scope === 'string') {
    issues.push({
      field: 'domains',
      message: `applies only to scope "domains", not "${request.scope}": leave out the scope or set it to domains`,
    });
  }
  for (const [index, seed] of (Array.isArray(request.seeds) ? request.seeds : []).entries()) {
    if (typeof seed === 'string' && !canonicalizeUrl(seed))
      issues.push({ field: `seeds.${index}`, message: `not a valid http(s) URL: ${seed}` });
  }
  if (request.scope === 'domains' && (request.domains ?? []).length === 0) {
    issues.push({ field: 'domains', message: 'needs at least one host when scope is "domains"' });
  }
  // The scope is compiled only inside the workers, where a bad pattern failed every activity that
  // needs it and the crawl waited forever with nothing fetched: every entry is checked here instead.
  const scopeChecks = [
    ['domains', request.domains, domainProblem],
    ['includePrefixes', request.includePrefixes, includePrefixProblem],
    ['exclude', request.exclude, excludePatternProblem],
  ] as const;
  for (const [field, values, problemOf] of scopeChecks) {
    for (const [index, value] of (Array.isArray(values) ? values : []).entries()) {
      const problem = typeof value === 'string' ? problemOf(value) : undefined;
      if (problem) issues.push({ field: `${field}.${index}`, message: problem });
    }
  }
  // A receiver the SSRF guard is sure to refuse is said now, not found in a worker's log later.
  for (const [index, url] of (Array.isArray(request.notify) ? request.notify : []).entries()) {
    const problem =
      typeof url === 'string' &&
      notifyAddressProblem(url, Array.isArray(request.allowHosts) ? request.allowHosts : []);
    if (problem) issues.push({ field: `notify.${index}`, message: problem });
  }
  if (issues.length > 0) throw new InvalidCrawlSpecError(issues);
  return parseCrawlSpec(request, crawlId);
}

/** What a schedule's action carries: every fire gets its own crawl id, so the spec has none. */
export type ScheduledCrawlSpec = Omit<CrawlSpec, 'crawlId'>;

/** The spec a schedule runs, validated exactly as a crawl started by hand would be. */
export function buildScheduledCrawlSpec(request: Omit<CrawlRequest, 'crawlId'>): ScheduledCrawlSpec {
  // A placeholder id only to pass validation: Temporal gives each fire its own.
  const { crawlId: _placeholder, ...spec } = buildCrawlSpec({ ...request }, 'schedule-check');
  return spec;
}
