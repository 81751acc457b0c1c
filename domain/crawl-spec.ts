/**
 * The crawl spec: the one input of `crawlWorkflow`, shared by the CLI, the HTTP API and anyone
 * starting a crawl from the Temporal CLI. This schema is the single source of its type, its
 * defaults and its validation (the workflow validates again, because Temporal CLI input is
 * untrusted JSON).
 */
import { z } from 'zod';
import { DETECTABLE_LANGUAGES, parseLanguageList } from './languages';
import { MAX_NOTIFY_URLS, notifyUrlProblem } from './webhook-events';

/**
 * Crawl ids: letters, digits, `._-`, optionally ending with the `-<RFC 3339 time>` a Temporal
 * Schedule appends to the workflow ids it starts (crawlWorkflow derives the crawl id from its
 * workflow id, so a scheduled crawl is `<scheduleId>-2026-11-24T03:00:00Z`; see
 * domain/schedule-spec.ts). Before that suffix was allowed such ids only ever failed workflow
 * tasks (retried, never recorded), so accepting them changes no recorded history.
 */
export const CRAWL_ID_PATTERN = '^[A-Za-z0-9._-]+(-\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z)?$';
const CRAWL_ID_REGEX = new RegExp(CRAWL_ID_PATTERN);

/** What `contentTypes` may name: HTML and the document types extract/documents converts. */
export const CONTENT_TYPES = ['html', 'pdf', 'markdown', 'text', 'docx'] as const;
export type ContentTypeName = (typeof CONTENT_TYPES)[number];

export const DEFAULT_USER_AGENT = 'gleaner/0.1 (+https://github.com/gleaner-crawler/gleaner)';

/**
 * Built on first use, not at import: outside the workflow bundle's preloaded modules every workflow
 * execution initialises the modules afresh, and the page workflows (one per page) never parse a spec,
 * so an eagerly built schema cost each of them its construction (about a tenth of the workflow
 * thread's CPU in bench:politeness). Inside workers, workflows/preloaded.ts builds it once per
 * workflow thread and every workflow shares it.
 */
function buildCrawlSpecSchema() {
  return z
    .object({
      /**
       * Stable id of the crawl; workflow ids and rows hang off it.
       * @default derived from the workflow id when started from the Temporal CLI without one
       */
      crawlId: z
        .string()
        .min(1)
        .max(100)
        .regex(
          CRAWL_ID_REGEX,
          'crawlId may contain only letters, digits, ".", "_" and "-" (and end with the time a Temporal Schedule appends)',
        )
        .optional(),
      /** Absolute http(s) URLs the crawl starts from. */
      seeds: z.array(z.string().min(1)).min(1, 'at least one seed URL is required').max(10_000),
      /** Pages fetched across the whole crawl, all origins together. @default 1000 */
      maxPages: z.number().int().positive().max(10_000_000).default(1000),
      /** Link hops from a seed; seeds are depth 0. @default 20 */
      maxDepth: z.number().int().min(0).max(1000).default(20),
      /** Which discovered URLs belong to the crawl. @default 'same-origin' */
      scope: z.enum(['same-origin', 'same-site', 'domains']).default('same-origin'),
      /** Host names (and their subdomains) in scope when `scope` is 'domains'. @default [] */
      domains: z.array(z.string().min(1)).default([]),
      /** When non-empty, only URLs starting with one of these are followed. @default [] */
      includePrefixes: z.array(z.string().min(1)).default([]),
      /** Globs (`*`) or `/regex/` matched against the full URL; a match is skipped. @default [] */
      exclude: z.array(z.string().min(1)).default([]),
      /** Minimum gap between two requests to one origin; robots Crawl-delay can only raise it. @default 1000 */
      delayMs: z.number().int().min(0).max(3_600_000).default(1000),
      /** Sent with every request. @default DEFAULT_USER_AGENT */
      userAgent: z.string().min(1).max(500).default(DEFAULT_USER_AGENT),
      /** Hosts or addresses the SSRF guard may fetch even when they resolve to private or loopback addresses. @default [] */
      allowHosts: z.array(z.string().min(1)).default([]),
      /**
       * Receivers of the crawl's signed webhooks (`crawl.started`, `pages.changed`, `crawl.completed`;
       * domain/webhook-events.ts): absolute http(s) URLs without credentials, reached through the SSRF
       * guard like any fetch (a private or loopback receiver only when `allowHosts` lists it). @default []
       */
      notify: z
        .array(
          z
            .string()
            .min(1)
            .superRefine((url, ctx) => {
              const problem = notifyUrlProblem(url);
              if (problem) ctx.addIssue({ code: 'custom', message: problem });
            }),
        )
        .max(MAX_NOTIFY_URLS)
        .default([]),
      /**
       * Kinds of response indexed: HTML pages and documents (PDF, Markdown, plain text, DOCX; a `.md`
       * URL served as text/plain is Markdown). Others are skipped as not pages. @default all of CONTENT_TYPES
       */
      contentTypes: z
        .array(z.enum(CONTENT_TYPES, { message: `must be one of ${CONTENT_TYPES.join(', ')}` }))
        .min(1, 'name at least one content type')
        .default([...CONTENT_TYPES]),
      /**
       * Languages the corpus keeps (ISO 639-1, e.g. ['en', 'de']): a page detected (else declared) in
       * another is stored flagged `wrong-language`, and links marked with another `hreflang` are not
       * followed. Empty keeps every language. @default []
       */
      /**
       * Before its first page, ask each origin once for a path that cannot exist (politely, robots and
       * SSRF checks included), so pages that read like its answer are flagged `soft-404` even without
       * a "not found" title. Off by default for now: it is one more request per origin.
       * @default false
       */
      soft404Probe: z.boolean().default(false),
      lang: z
        .array(z.string())
        .max(DETECTABLE_LANGUAGES.length)
        .default([])
        .transform((codes, ctx) => {
          if (codes.length === 0) return [];
          try {
            return parseLanguageList(codes.join(','));
          } catch (error) {
            ctx.addIssue({ code: 'custom', message: (error as Error).message.replace(/^--lang: /, '') });
            return z.NEVER;
          }
        }),
      /** Response bodies are cut at this size. @default 10 MiB */
      maxBodyBytes: z
        .number()
        .int()
        .positive()
        .max(512 * 1024 * 1024)
        .default(10 * 1024 * 1024),
      /**
       * Recrawl only known pages that are due by their learned revisit interval; the others are
       * left unvisited (seeds and newly found pages are still fetched). @default false
       */
      onlyDue: z.boolean().default(false),
      /**
       * Also summarise and tag each page with the LLM endpoint the workers are configured with
       * (GLEANER_LLM_URL), on the `gleaner-llm` queue; the offline summary and tags are made either way.
       * @default false
       */
      llmSummaries: z.boolean().default(false),
      /** Read each origin's sitemaps (robots.txt `Sitemap:` lines and /sitemap.xml) into the frontier. @default true */
      sitemaps: z.boolean().default(true),
      /** Time for a whole response body to arrive; a slower (trickling) body is cut. @default 30000 */
      bodyTimeoutMs: z.number().int().min(100).max(600_000).default(30_000),
      /** Redirect hops followed per request. @default 5 */
      maxRedirects: z.number().int().min(0).max(20).default(5),
      /**
       * Requests in flight at once on one origin whose robots.txt sets no Crawl-delay (an origin
       * with a Crawl-delay always gets one at a time). Starts are scheduled at least the gap apart.
       * @default 1
       */
      perOriginConcurrency: z.number().int().min(1).max(16).default(1),
      /** Ceiling on page requests per second across all origins of the crawl; 0 means none. @default 0 */
      maxRequestsPerSecond: z.number().min(0).max(10_000).default(0),
      /** Up to this fraction of the gap is added at random to each wait, so requests do not tick like a clock. @default 0.1 */
      jitterRatio: z.number().min(0).max(1).default(0.1),
      /** An origin whose robots.txt Crawl-delay exceeds this is skipped (with the reason) rather than crawled for days. @default 60000 */
      maxCrawlDelayMs: z.number().int().min(0).max(86_400_000).default(60_000),
      /** First wait after a 429/503 without Retry-After; doubles per repeat. @default 30000 */
      backoffBaseMs: z.number().int().min(0).max(3_600_000).default(30_000),
      /** Longest wait after throttling, Retry-After included. @default 600000 */
      backoffMaxMs: z.number().int().min(0).max(86_400_000).default(600_000),
      /** Retries of one URL after 429 or 5xx answers before it counts as an error. @default 3 */
      maxRetries: z.number().int().min(0).max(20).default(3),
      /** Consecutive 403 answers after which an origin is stopped. @default 5 */
      stopAfter403: z.number().int().min(1).max(1000).default(5),
      /**
       * When to render pages in a headless browser: 'auto' when a page's HTML looks client-rendered
       * (and, per origin, for kinds of page that proved to need it), 'always', or 'never'. @default 'auto'
       */
      render: z.enum(['auto', 'never', 'always']).default('auto'),
      /**
       * Workflows continue as new once their history passes this many events, keeping replay cheap
       * (advanced; about 11 events per page per origin). @default 4000
       */
      continueAsNewAfterEvents: z.number().int().min(200).max(40_000).default(4000),
      /**
       * Most URLs one origin workflow keeps in its frontier, and so in its history and its
       * continue-as-new input. Link-discovered URLs beyond it wait in Postgres and are paged back
       * in as the frontier drains (advanced; docs/scaling.md). @default 2000
       */
      frontierMaxUrls: z.number().int().min(10).max(50_000).default(2000),
    })
    .strict();
}

type CrawlSpecSchema = ReturnType<typeof buildCrawlSpecSchema>;
let crawlSpecSchema: CrawlSpecSchema | undefined;

/** What callers may pass: every defaulted field optional. */
export type CrawlSpecInput = z.input<CrawlSpecSchema>;
/** A validated spec with every default applied and its crawl id settled. */
export type CrawlSpec = z.output<CrawlSpecSchema> & { crawlId: string };
export type ScopeMode = CrawlSpec['scope'];

/** One problem with a crawl request: the spec field it concerns ('' for the whole) and what is wrong. */
export interface CrawlSpecIssue {
  /** The field's path in spec names, e.g. `maxPages` or `seeds.0`. */
  field: string;
  message: string;
}

/**
 * A crawl request that cannot become a spec. Each entry point words it for its users by the field
 * (`body field "seeds.0"` in the API, `--max-pages` on the command line).
 */
export class InvalidCrawlSpecError extends Error {
  override readonly name = 'InvalidCrawlSpecError';
  readonly problems: readonly string[];
  constructor(readonly issues: readonly CrawlSpecIssue[]) {
    const problems = issues.map(({ field, message }) => (field ? `${field}: ${message}` : message));
    super(`invalid crawl spec: ${problems.join('; ')}`);
    this.problems = problems;
  }
}

/**
 * Validates and fills defaults; throws InvalidCrawlSpecError listing every problem.
 * `fallbackCrawlId` supplies the id when the input has none.
 */
export function parseCrawlSpec(input: unknown, fallbackCrawlId?: string): CrawlSpec {
  crawlSpecSchema ??= buildCrawlSpecSchema();
  const nul = nulIssues(input, []);
  if (nul.length > 0) throw new InvalidCrawlSpecError(nul);
  const result = crawlSpecSchema.safeParse(input);
  if (!result.success) {
    throw new InvalidCrawlSpecError(
      result.error.issues.map((issue) => ({ field: issue.path.join('.'), message: issue.message })),
    );
  }
  const crawlId = result.data.crawlId ?? fallbackCrawlId;
  if (!crawlId) throw new InvalidCrawlSpecError([{ field: 'crawlId', message: 'required' }]);
  return { ...result.data, crawlId };
}

/**
 * Strings holding a NUL character, which no Postgres text or jsonb value can: a spec carrying one
 * (a `userAgent` or `exclude` sent as JSON with `\u0000`) was accepted, and its crawl then retried
 * recording itself for ever. Refused here instead, with the field, like any other bad value.
 */
function nulIssues(value: unknown, path: readonly (string | number)[]): CrawlSpecIssue[] {
  if (typeof value === 'string')
    return value.includes('\u0000')
      ? [{ field: path.join('.'), message: 'must not contain a NUL character (\\u0000)' }]
      : [];
  if (Array.isArray(value)) return value.flatMap((item, index) => nulIssues(item, [...path, index]));
  if (typeof value === 'object' && value !== null)
    return Object.entries(value).flatMap(([key, item]) => nulIssues(item, [...path, key]));
  return [];
}
