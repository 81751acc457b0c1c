/**
 * `gleaner robots <url...>`: what robots.txt says about some URLs for one user agent. With
 * `--robots-file` the file is read and nothing touches the network; otherwise `<origin>/robots.txt`
 * is fetched once per origin through `fetchPage` (SSRF guard included) and its status decides
 * (RFC 9309 §2.3.1): 2xx parse, 4xx allow all, 5xx or unreachable disallow all.
 */
import { readFile } from 'node:fs/promises';
import { fetchPage } from '../activities/http/fetch-page';
import type { FetchPageResult } from '../activities/http/fetch-result';
import { DEFAULT_USER_AGENT } from '../domain/crawl-spec';
import {
  allowAll,
  crawlDelaySeconds,
  disallowAll,
  evaluate,
  parseRobots,
  ROBOTS_MAX_BYTES,
  type RobotsFile,
  type RobotsVerdict,
  sitemaps,
} from '../domain/robots';
import { canonicalizeUrl } from '../domain/url';
import { UsageError } from './errors';

export interface RobotsCommandOptions {
  robotsFile?: string;
  userAgent?: string;
  allowHost?: string[];
  json?: boolean;
}

/** Where the rules came from; the last three say which status rule replaced the file. */
export type RobotsSource =
  | 'file'
  | 'fetched'
  | `status-${number}-allow-all`
  | 'redirect-limit-allow-all'
  | 'unreachable-disallow-all';

export interface LoadedRobots {
  readonly robots: RobotsFile;
  readonly source: RobotsSource;
  readonly robotsUrl?: string;
  /** HTTP status of the robots.txt response, when there was one. */
  readonly status?: number;
  /** Why the file could not be used, for the `*-all` sources. */
  readonly reason?: string;
}

/** One line of `--json` output. */
export interface RobotsReport extends RobotsVerdict {
  readonly url: string;
  readonly userAgent: string;
  readonly crawlDelaySeconds?: number;
  readonly sitemaps: string[];
  readonly source: RobotsSource;
  readonly robotsUrl?: string;
  readonly status?: number;
  readonly reason?: string;
}

/** robots.txt is text/plain, but servers send all sorts; any 2xx body is parsed. */
const ROBOTS_CONTENT_TYPES = ['*/*'];

export async function runRobotsCommand(urls: string[], options: RobotsCommandOptions): Promise<void> {
  const userAgent = options.userAgent ?? DEFAULT_USER_AGENT;
  if (userAgent.trim() === '' || /[\r\n\0]/.test(userAgent)) {
    throw new UsageError('--user-agent must be one non-empty line');
  }
  const origins = urls.map((url) => {
    const canonical = canonicalizeUrl(url);
    if (canonical === null) throw new UsageError(`not a valid http(s) URL: ${url}`);
    return new URL(canonical).origin;
  });

  const fromFile = options.robotsFile !== undefined ? await readRobotsFile(options.robotsFile) : undefined;
  const perOrigin = new Map<string, LoadedRobots>();
  for (const [index, url] of urls.entries()) {
    const origin = origins[index] ?? '';
    let loaded = fromFile ?? perOrigin.get(origin);
    if (loaded === undefined) {
      loaded = await fetchRobots(origin, userAgent, options.allowHost ?? []);
      perOrigin.set(origin, loaded);
    }
    const report = buildReport(url, userAgent, loaded);
    process.stdout.write(options.json ? `${JSON.stringify(report)}\n` : formatReport(report));
  }
}

export function buildReport(url: string, userAgent: string, loaded: LoadedRobots): RobotsReport {
  const verdict = evaluate(loaded.robots, url, userAgent);
  const delay = crawlDelaySeconds(loaded.robots, userAgent);
  return {
    url,
    ...verdict,
    userAgent,
    ...(delay !== undefined ? { crawlDelaySeconds: delay } : {}),
    sitemaps: sitemaps(loaded.robots),
    source: loaded.source,
    ...(loaded.robotsUrl !== undefined ? { robotsUrl: loaded.robotsUrl } : {}),
    ...(loaded.status !== undefined ? { status: loaded.status } : {}),
    ...(loaded.reason !== undefined ? { reason: loaded.reason } : {}),
  };
}

async function readRobotsFile(file: string): Promise<LoadedRobots> {
  let text: string;
  try {
    text = (await readFile(file)).toString('utf8');
  } catch (error) {
    const code = (error as { code?: string }).code;
    throw new UsageError(`cannot read --robots-file ${file}: ${code ?? (error as Error).message}`);
  }
  return { robots: parseRobots(text), source: 'file' };
}

async function fetchRobots(origin: string, userAgent: string, allowHosts: string[]): Promise<LoadedRobots> {
  const robotsUrl = `${origin}/robots.txt`;
  const result = await fetchPage(robotsUrl, {
    userAgent,
    allowHosts,
    allowedContentTypes: ROBOTS_CONTENT_TYPES,
    // As the crawler reads it (RFC 9309 §2.5): the first 500 KiB of a longer file are parsed.
    maxBodyBytes: ROBOTS_MAX_BYTES,
    truncateBody: true,
  });
  return { robotsUrl, ...robotsFromFetch(result) };
}

/**
 * RFC 9309 §2.3.1 applied to one fetch of robots.txt. A 429 counts as unreachable rather than
 * unavailable (it asks us to slow down, not to crawl everything); more than five redirects counts
 * as unavailable (§2.3.1.2).
 */
export function robotsFromFetch(result: FetchPageResult): Omit<LoadedRobots, 'robotsUrl'> {
  const status = result.status !== undefined ? { status: result.status } : {};
  const unreachable = (reason: string) => ({
    robots: disallowAll(),
    source: 'unreachable-disallow-all' as const,
    ...status,
    reason,
  });
  switch (result.kind) {
    case 'ok':
      return { robots: parseRobots(result.text), source: 'fetched', status: result.status };
    case 'http-error':
      if (result.status >= 400 && result.status < 500 && result.status !== 429) {
        return { robots: allowAll(), source: `status-${result.status}-allow-all`, status: result.status };
      }
      return unreachable(`HTTP ${result.status}`);
    case 'redirect-limit':
      return {
        robots: allowAll(),
        source: 'redirect-limit-allow-all',
        ...status,
        reason: `redirect ${result.reason === 'loop' ? 'loop' : 'chain too long'} at ${result.location}`,
      };
    case 'blocked':
      return unreachable(`blocked by the SSRF guard: ${result.message}`);
    case 'network-error':
      return unreachable(`${result.code}: ${result.message}`);
    case 'too-large':
      return unreachable(`larger than ${result.limitBytes} bytes`);
    case 'unsupported-content-type':
      return unreachable(
        result.contentEncoding
          ? `unsupported content-encoding ${result.contentEncoding}`
          : 'response without a content-type',
      );
    case 'not-modified':
      return unreachable('unexpected 304 Not Modified');
  }
}

function formatReport(report: RobotsReport): string {
  const rule = report.rule
    ? `${report.rule.directive} ${report.rule.path} (line ${report.rule.line})`
    : 'none matched (allowed by default)';
  const lines = [
    `${report.allowed ? 'allowed' : 'DISALLOWED'}  ${report.url}`,
    `  rule         ${rule}`,
    `  group        ${report.group ?? 'none applies'}`,
    `  crawl-delay  ${report.crawlDelaySeconds !== undefined ? `${report.crawlDelaySeconds} s` : 'none'}`,
    `  sitemaps     ${report.sitemaps.length > 0 ? report.sitemaps.join('\n               ') : 'none'}`,
    `  robots.txt   ${describeSource(report)}`,
    '',
  ];
  return `${lines.join('\n')}\n`;
}

function describeSource(report: RobotsReport): string {
  const where = report.robotsUrl ?? '';
  switch (report.source) {
    case 'file':
      return 'from --robots-file';
    case 'fetched':
      return `${where} (HTTP ${report.status})`;
    case 'unreachable-disallow-all':
      return `${where} unreachable (${report.reason}): everything disallowed`;
    case 'redirect-limit-allow-all':
      return `${where} unavailable (${report.reason}): everything allowed`;
    default:
      return `${where} answered HTTP ${report.status}: everything allowed`;
  }
}
