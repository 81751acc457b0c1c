/**
 * `gleaner robots <url...>`: what robots.txt says about some URLs for one user agent. With
 * `--robots-file` the file is read and nothing touches the network; otherwise `<origin>/robots.txt`
 * is fetched once per origin through `fetchPage` (SSRF guard included) and read as the crawler reads
 * it (RFC 9309 §2.3.1): 2xx parse, 4xx allow all, 5xx or unreachable disallow all.
 */
import { readFile } from 'node:fs/promises';
import { fetchPage } from '../activities/http/fetch-page';
import type { FetchPageResult } from '../activities/http/fetch-result';
import { interpretRobots, ROBOTS_FETCH } from '../activities/robots-policy';
import { DEFAULT_USER_AGENT } from '../domain/crawl-spec';
import {
  crawlDelaySeconds,
  evaluate,
  parseRobots,
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

/** Where the rules came from; the last four say which status rule replaced the file. */
export type RobotsSource =
  | 'file'
  | 'fetched'
  | `status-${number}-allow-all`
  | 'redirect-limit-allow-all'
  | 'unreadable-allow-all'
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

export async function runRobotsCommand(urls: string[], options: RobotsCommandOptions): Promise<void> {
  const userAgent = options.userAgent ?? DEFAULT_USER_AGENT;
  if (userAgent.trim() === '' || /[\r\n\0]/.test(userAgent)) {
    throw new UsageError('--user-agent must be one non-empty line');
  }
  const origins = urls.map((url) => {
    const canonical = canonicalizeUrl(url);
    if (canonical === null) {
      // A path alone is the likely slip with --robots-file, whose rules seem to need no origin.
      const hint = url.startsWith('/') ? ` (give the whole URL, like https://example.com${url})` : '';
      throw new UsageError(`not a valid http(s) URL: ${url}${hint}`);
    }
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
  const result = await fetchPage(robotsUrl, { userAgent, allowHosts, ...ROBOTS_FETCH });
  return { robotsUrl, ...robotsFromFetch(result) };
}

/**
 * One fetch of robots.txt, read exactly as the crawler reads it (`interpretRobots`), labelled for
 * this report: which status rule replaced the file, and why.
 */
export function robotsFromFetch(result: FetchPageResult): Omit<LoadedRobots, 'robotsUrl'> {
  const record = interpretRobots('', result);
  const status = record.httpStatus !== undefined ? { status: record.httpStatus } : {};
  switch (record.source) {
    case 'fetched':
      return { robots: record.rules, source: 'fetched', ...status };
    case 'unreachable-disallow-all':
      return {
        robots: record.rules,
        source: 'unreachable-disallow-all',
        ...status,
        reason: unreachableReason(result),
      };
    case 'unavailable-allow-all':
      if (result.kind === 'redirect-limit') {
        return {
          robots: record.rules,
          source: 'redirect-limit-allow-all',
          ...status,
          reason: `redirect ${result.reason === 'loop' ? 'loop' : 'chain too long'} at ${result.location}`,
        };
      }
      if (result.kind === 'http-error' || result.kind === 'not-modified') {
        return { robots: record.rules, source: `status-${result.status}-allow-all`, status: result.status };
      }
      return {
        robots: record.rules,
        source: 'unreadable-allow-all',
        ...status,
        reason: record.error ?? 'robots.txt could not be read',
      };
  }
}

function unreachableReason(result: FetchPageResult): string {
  switch (result.kind) {
    case 'http-error':
      return `HTTP ${result.status}`;
    case 'blocked':
      return `blocked by the SSRF guard: ${result.message}`;
    case 'network-error':
      return `${result.code}: ${result.message}`;
    case 'too-large':
      return `larger than ${result.limitBytes} bytes`;
    default:
      return result.kind;
  }
}

function formatReport(report: RobotsReport): string {
  const rule = report.rule
    ? `${report.rule.directive} ${report.rule.path} ${
        // Line 0 is no line of a file: the rule stands in for a robots.txt that could not be read.
        report.rule.line > 0 ? `(line ${report.rule.line})` : '(no robots.txt could be read: see below)'
      }`
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
    case 'unreadable-allow-all':
      return `${where} unavailable (${report.reason}): everything allowed`;
    default:
      return `${where} answered HTTP ${report.status}: everything allowed`;
  }
}
