/**
 * Crawler-trap heuristics: URLs that a site can generate without end (calendars, repeated
 * path segments from broken relative links, endless parameter combinations). Pure, so the
 * origin workflow can drop such URLs before they enter the frontier.
 */

/** Limits of {@link trapReason}; every field optional. */
export interface TrapOptions {
  /** Longer URLs are traps. @default 2048 */
  maxUrlLength?: number;
  /** A path segment occurring more often than this is a trap (`/a/b/a/b/a/b/a/`). @default 3 */
  maxRepeatedSegments?: number;
  /** More query parameters than this is a trap. @default 12 */
  maxQueryParams?: number;
  /** Dates in paths or query values before this year are calendar traps. @default 1970 */
  minYear?: number;
  /**
   * Dates after this year are calendar traps. Workflows should pass the current year plus a
   * margin (from the workflow clock, which is deterministic). @default 2100
   */
  maxYear?: number;
  /** More date-like path positions than this (`/2024/01/2024/02/`) is a calendar trap. @default 1 */
  maxDatesInPath?: number;
}

const DEFAULTS: Required<TrapOptions> = {
  maxUrlLength: 2048,
  maxRepeatedSegments: 3,
  maxQueryParams: 12,
  minYear: 1970,
  maxYear: 2100,
  maxDatesInPath: 1,
};

const YEAR_SEGMENT = /^(\d{4})$/;
const MONTH_SEGMENT = /^(0[1-9]|1[0-2])$/;
const ISO_DATE = /(?:^|[^\d])(\d{4})-(0[1-9]|1[0-2])(?:-\d{2})?(?![\d])/;
const YEAR_KEYS = new Set(['year', 'yr', 'y']);

/**
 * Why `url` looks like a crawler trap, or undefined when it does not. Invalid URLs are reported
 * as such. Checks length, repeated path segments, the number of query parameters, and calendar
 * paths or parameters beyond the year bounds.
 */
export function trapReason(url: string, options: TrapOptions = {}): string | undefined {
  const limits = { ...DEFAULTS, ...definedOnly(options) };
  if (url.length > limits.maxUrlLength) {
    return `URL is ${url.length} characters long, over the limit of ${limits.maxUrlLength}`;
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'not a valid URL';
  }
  const segments = parsed.pathname.split('/').filter((segment) => segment !== '');
  const params = parsed.search.length > 1 ? parsed.search.slice(1).split('&').filter(Boolean) : [];
  return (
    repeatedSegmentReason(segments, limits.maxRepeatedSegments) ??
    (params.length > limits.maxQueryParams
      ? `${params.length} query parameters, over the limit of ${limits.maxQueryParams}`
      : undefined) ??
    calendarPathReason(segments, limits) ??
    calendarQueryReason(parsed.searchParams, limits)
  );
}

function definedOnly(options: TrapOptions): TrapOptions {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
}

function repeatedSegmentReason(segments: string[], maxRepeats: number): string | undefined {
  const counts = new Map<string, number>();
  for (const segment of segments) {
    const count = (counts.get(segment) ?? 0) + 1;
    if (count > maxRepeats) {
      return `path segment ${JSON.stringify(segment)} repeats more than ${maxRepeats} times`;
    }
    counts.set(segment, count);
  }
  return undefined;
}

function calendarPathReason(segments: string[], limits: Required<TrapOptions>): string | undefined {
  let dates = 0;
  for (const [index, segment] of segments.entries()) {
    const year = pathYear(segment, segments[index + 1]);
    if (year === undefined) continue;
    dates++;
    const bound = yearOutOfBounds(year, limits);
    if (bound) return `calendar path with year ${year}, ${bound}`;
  }
  if (dates > limits.maxDatesInPath) {
    return `calendar path with ${dates} dates, over the limit of ${limits.maxDatesInPath}`;
  }
  return undefined;
}

/** A year when `segment` starts a date: `2024` followed by a month segment, or `2024-05[-17]`. */
function pathYear(segment: string, next: string | undefined): number | undefined {
  const plain = YEAR_SEGMENT.exec(segment);
  if (plain && next !== undefined && MONTH_SEGMENT.test(next)) return Number(plain[1]);
  const iso = ISO_DATE.exec(segment);
  return iso ? Number(iso[1]) : undefined;
}

function calendarQueryReason(params: URLSearchParams, limits: Required<TrapOptions>): string | undefined {
  for (const [key, value] of params) {
    const iso = ISO_DATE.exec(value);
    const year = iso
      ? Number(iso[1])
      : YEAR_KEYS.has(key.toLowerCase()) && /^\d{4}$/.test(value)
        ? Number(value)
        : undefined;
    if (year === undefined) continue;
    const bound = yearOutOfBounds(year, limits);
    if (bound) return `calendar parameter ${key}=${value}, ${bound}`;
  }
  return undefined;
}

function yearOutOfBounds(year: number, limits: Required<TrapOptions>): string | undefined {
  if (year < limits.minYear) return `before ${limits.minYear}`;
  if (year > limits.maxYear) return `after ${limits.maxYear}`;
  return undefined;
}

/** Limits of {@link TrapBudget}; every field optional. */
export interface TrapBudgetOptions {
  /** Distinct URLs admitted per trap family: a year of monthly calendar pages. @default 12 */
  perFamily?: number;
  /** Families tracked; a URL of a family beyond these is refused. @default 1000 */
  maxFamilies?: number;
}

const DAY_SEGMENT = /^(0[1-9]|[12]\d|3[01])$/;
const ISO_SEGMENT = /^\d{4}-(0[1-9]|1[0-2])(?:-(0[1-9]|[12]\d|3[01]))?$/;

/**
 * The family of URLs an endless generator produces that `url` belongs to, or undefined when it
 * belongs to none. Each passes {@link trapReason} one by one and is only ever bounded by the crawl's
 * depth, so a family is given a budget of distinct URLs instead:
 *
 * - `calendar`: a path that ends in a date (`/calendar/2026/01/`, `/events/2026/01/15/`,
 *   `/day/2026-01-15`) or a query holding one (`?month=2026-01`): calendar views, one family per
 *   path shape with the date masked and per date granularity. A date followed by more path is a
 *   dated page (`/blog/2024/05/17/my-post/`) and belongs to no family.
 * - `repeat`: a path in which a segment other than a number occurs twice (`/a/b/a/b/`, `/x/x/`), the
 *   shape broken relative links take; one family per first segment.
 */
export function trapFamily(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  const segments = parsed.pathname.split('/').filter((segment) => segment !== '');
  const calendarPath = maskedTrailingDate(segments);
  if (calendarPath !== undefined) return `calendar ${parsed.origin}/${calendarPath}`;
  // Numbers repeat in ordinary paths (`/2024/01/01/`, `/page/2/2`); words do not.
  const words = segments.filter((segment) => !/^\d+$/.test(segment));
  if (new Set(words).size < words.length) return `repeat ${parsed.origin}/${segments[0]}/`;
  const dateKeys = [...parsed.searchParams]
    .filter(
      ([key, value]) => ISO_DATE.test(value) || (YEAR_KEYS.has(key.toLowerCase()) && /^\d{4}$/.test(value)),
    )
    .map(([key]) => key);
  if (dateKeys.length > 0) return `calendar ${parsed.origin}${parsed.pathname}?${dateKeys.sort().join('&')}`;
  return undefined;
}

/** The path with its trailing date masked (`calendar/{yyyy}/{mm}/{dd}`), when it ends in a date. */
function maskedTrailingDate(segments: readonly string[]): string | undefined {
  const last = segments.length - 1;
  const at = (index: number) => segments[index] ?? '';
  const prefix = (end: number) => segments.slice(0, end);
  if (last >= 0 && ISO_SEGMENT.test(at(last))) return [...prefix(last), '{date}'].join('/');
  if (
    last >= 2 &&
    YEAR_SEGMENT.test(at(last - 2)) &&
    MONTH_SEGMENT.test(at(last - 1)) &&
    DAY_SEGMENT.test(at(last))
  )
    return [...prefix(last - 2), '{yyyy}', '{mm}', '{dd}'].join('/');
  if (last >= 1 && YEAR_SEGMENT.test(at(last - 1)) && MONTH_SEGMENT.test(at(last)))
    return [...prefix(last - 1), '{yyyy}', '{mm}'].join('/');
  return undefined;
}

/**
 * Admits at most `perFamily` distinct URLs of each {@link trapFamily}: an endless calendar or a
 * self-repeating path draws a bounded number of requests whatever the crawl's depth, and URLs of no
 * family (every ordinary page, every dated post) are always admitted. A URL admitted once stays
 * admitted, so asking again (a retried activity) gives the same answer. Pure: no clock, no I/O.
 */
export class TrapBudget {
  private readonly families = new Map<string, Set<string>>();
  private readonly perFamily: number;
  private readonly maxFamilies: number;

  constructor(options: TrapBudgetOptions = {}) {
    this.perFamily = options.perFamily ?? 12;
    this.maxFamilies = options.maxFamilies ?? 1000;
  }

  /** True when `url` may be crawled; counts it against its family. */
  admit(url: string): boolean {
    const family = trapFamily(url);
    if (family === undefined) return true;
    let admitted = this.families.get(family);
    if (admitted === undefined) {
      if (this.families.size >= this.maxFamilies) return false;
      admitted = new Set();
      this.families.set(family, admitted);
    }
    if (admitted.has(url)) return true;
    if (admitted.size >= this.perFamily) return false;
    admitted.add(url);
    return true;
  }
}
