/**
 * `gleaner crawl`'s flags as a crawl request in the spec's own names: the one place the command
 * line's words (`--domain`, `--max-rps`, …) meet the spec's (`domains`, `maxRequestsPerSecond`).
 * `gleaner schedule create` takes the same flags, so both build their spec here.
 */

import type { ScheduledCrawlSpec } from '../domain/crawl-request';
import { buildCrawlSpec, buildScheduledCrawlSpec, type CrawlRequest } from '../domain/crawl-request';
import { type CrawlSpec, type CrawlSpecIssue, InvalidCrawlSpecError } from '../domain/crawl-spec';
import { WEBHOOK_SECRET_ENV } from '../domain/webhook-events';
import { newCrawlId } from '../infra/start-crawl';
import { UsageError } from './errors';
import { attachesToRunningDev } from './local-workers';

/** The flags of `gleaner crawl` (and `schedule create`) that shape the crawl, as commander parses them. */
export interface CrawlFlags {
  maxPages?: number;
  maxDepth?: number;
  scope?: string;
  domain?: string[];
  includePrefix?: string[];
  exclude?: string[];
  delayMs?: number;
  maxRps?: number;
  perOriginConcurrency?: number;
  frontierMaxUrls?: number;
  userAgent?: string;
  allowHost?: string[];
  notify?: string[];
  maxBodyBytes?: number;
  contentTypes?: string[];
  lang?: string[];
  soft404Probe?: boolean;
  render?: string;
  onlyDue?: boolean;
  llmUrl?: string;
  crawlId?: string;
  /** Whether this process runs the workers (gleaner crawl's --[no-]local-workers). */
  localWorkers?: boolean;
}

/** Spec field → the flag that sets it, for error messages in the user's words. */
const FLAG_OF: Record<string, string> = {
  seeds: 'URL',
  crawlId: '--crawl-id',
  maxPages: '--max-pages',
  maxDepth: '--max-depth',
  scope: '--scope',
  domains: '--domain',
  includePrefixes: '--include-prefix',
  exclude: '--exclude',
  delayMs: '--delay-ms',
  maxRequestsPerSecond: '--max-rps',
  perOriginConcurrency: '--per-origin-concurrency',
  frontierMaxUrls: '--frontier-max-urls',
  userAgent: '--user-agent',
  allowHosts: '--allow-host',
  notify: '--notify',
  maxBodyBytes: '--max-body-bytes',
  contentTypes: '--content-types',
  lang: '--lang',
  soft404Probe: '--soft-404-probe',
  render: '--render',
  onlyDue: '--only-due',
  llmSummaries: '--llm-url',
};

export function crawlRequestFromFlags(urls: string[], flags: CrawlFlags): CrawlRequest {
  const defined = <K extends keyof CrawlRequest>(key: K, value: CrawlRequest[K] | undefined) =>
    value === undefined ? {} : { [key]: value };
  return {
    seeds: urls,
    ...defined('crawlId', flags.crawlId),
    ...defined('maxPages', flags.maxPages),
    ...defined('maxDepth', flags.maxDepth),
    ...defined('scope', flags.scope as CrawlRequest['scope']),
    ...defined('domains', flags.domain),
    ...defined('includePrefixes', flags.includePrefix),
    ...defined('exclude', flags.exclude),
    ...defined('delayMs', flags.delayMs),
    ...defined('maxRequestsPerSecond', flags.maxRps),
    ...defined('perOriginConcurrency', flags.perOriginConcurrency),
    ...defined('frontierMaxUrls', flags.frontierMaxUrls),
    ...defined('userAgent', flags.userAgent),
    ...defined('allowHosts', flags.allowHost),
    ...defined('notify', flags.notify),
    ...defined('maxBodyBytes', flags.maxBodyBytes),
    ...defined('contentTypes', flags.contentTypes as CrawlRequest['contentTypes']),
    ...defined('lang', flags.lang),
    ...(flags.soft404Probe ? { soft404Probe: true } : {}),
    ...defined('render', flags.render as CrawlRequest['render']),
    ...(flags.onlyDue ? { onlyDue: true } : {}),
    // The LLM pass runs when this process's workers know an endpoint (the flag or the environment).
    ...(flags.llmUrl || process.env.GLEANER_LLM_URL ? { llmSummaries: true } : {}),
  };
}

/** An invalid request in the command line's words: `--max-pages: …`, `URL 2: …`. */
export function usageErrorOf(error: InvalidCrawlSpecError): UsageError {
  return new UsageError(error.issues.map(describeIssue).join('; '));
}

function describeIssue({ field, message }: CrawlSpecIssue): string {
  const [head = '', index] = field.split('.');
  if (head === 'seeds' && index !== undefined) return message;
  if (head === 'domains' && message.startsWith('needs at least one host'))
    return '--scope domains needs at least one --domain';
  const otherScope =
    head === 'domains' ? /^applies only to scope "domains", not "([^"]+)"/.exec(message) : null;
  if (otherScope)
    return `--domain applies only to --scope domains, not --scope ${otherScope[1]}: leave out --scope`;
  const flag = FLAG_OF[head];
  return flag ? `${flag}: ${message}` : field ? `${field}: ${message}` : message;
}

function asUsage<T>(build: () => T): T {
  try {
    return build();
  } catch (error) {
    if (error instanceof InvalidCrawlSpecError) throw usageErrorOf(error);
    throw error;
  }
}

export function specFromFlags(urls: string[], flags: CrawlFlags): CrawlSpec {
  const spec = asUsage(() =>
    buildCrawlSpec(crawlRequestFromFlags(urls, flags), flags.crawlId ?? newCrawlId()),
  );
  requireWebhookSecret(spec, flags);
  return spec;
}

export function scheduledSpecFromFlags(urls: string[], flags: CrawlFlags): ScheduledCrawlSpec {
  const { crawlId: _none, ...request } = crawlRequestFromFlags(urls, flags);
  const spec = asUsage(() => buildScheduledCrawlSpec(request));
  requireWebhookSecret(spec, flags);
  return spec;
}

/**
 * Webhooks are always signed, so `--notify` needs GLEANER_WEBHOOK_SECRET wherever they are delivered.
 * When this process's own workers deliver them (the embedded default, or --local-workers) a missing
 * secret is a usage error before anything starts. Workers elsewhere (TEMPORAL_ADDRESS set, or the
 * running `gleaner dev` this process attaches to, which then starts no workers of its own) hold the
 * secret themselves and this process never needs it: a worker without it fails each delivery with an
 * error naming the variable, and Temporal retries until it is set, so nothing is lost.
 */
function requireWebhookSecret(spec: { notify: readonly string[] }, flags: CrawlFlags): void {
  if (spec.notify.length === 0 || process.env[WEBHOOK_SECRET_ENV]) return;
  const localWorkers = flags.localWorkers ?? !process.env.TEMPORAL_ADDRESS;
  if (localWorkers && !attachesToRunningDev()) {
    throw new UsageError(
      `--notify: set ${WEBHOOK_SECRET_ENV}: webhooks are always signed (HMAC-SHA256), and this process delivers them`,
    );
  }
}
