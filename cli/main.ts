/**
 * The `gleaner` command line. Thin: parses flags, opens the runtime, calls into the library.
 * User mistakes print one line and exit 2; a failed crawl exits 1.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { DEFAULT_API_HOST, DEFAULT_API_PORT } from '../api/defaults';
import { QUEUE_KINDS, type QueueKind } from '../domain/temporal-names';
import { stopLiveThreads } from '../embed/live-threads';
import { logger } from '../infra/logger';
import { isUserFacing } from './errors';
import { EXTRACT_FORMATS } from './extract-formats';
import { collect, integerOption, listOption, MAX_PORT, numberOption } from './options';

const program = new Command('gleaner')
  .description(
    'A polite, durable web crawler that turns websites into a RAG corpus, on Temporal and Postgres.',
  )
  .version('0.1.0')
  // Handled by bin/gleaner.js (it decides where logs go before anything is loaded); listed for --help.
  .option('--verbose', 'JSON logs on stderr instead of the log file under GLEANER_HOME')
  .showHelpAfterError('(run with --help for usage)')
  // Before the subcommands are added, so they inherit it: usage errors exit 2, not 1.
  .exitOverride();

program
  .command('crawl')
  .description('crawl one or more sites')
  .argument('<url...>', 'seed URLs (http or https)')
  .option(
    '--max-pages <n>',
    'pages to fetch across the crawl (default 1000)',
    integerOption('--max-pages', 1),
  )
  .option('--max-depth <n>', 'link hops from a seed (default 20)', integerOption('--max-depth', 0))
  .addOption(
    new Option('--scope <mode>', 'which discovered URLs to follow (default same-origin)').choices([
      'same-origin',
      'same-site',
      'domains',
    ]),
  )
  .option(
    '--domain <host>',
    'a host (and its subdomains) in scope; repeatable; implies --scope domains',
    collect,
  )
  .option('--include-prefix <prefix>', 'only follow URLs starting with this; repeatable', collect)
  .option('--exclude <pattern>', 'skip URLs matching this glob or /regex/; repeatable', collect)
  .option(
    '--delay-ms <ms>',
    'minimum gap between requests to one origin (default 1000)',
    integerOption('--delay-ms', 0),
  )
  .option(
    '--per-origin-concurrency <n>',
    'requests in flight per origin when its robots.txt sets no Crawl-delay (default 1, at most 16)',
    integerOption('--per-origin-concurrency', 1),
  )
  .option(
    '--frontier-max-urls <n>',
    'most URLs one origin keeps in its workflow; the rest wait in Postgres (default 2000, 10 to 50000)',
    integerOption('--frontier-max-urls', 10),
  )
  .option(
    '--max-rps <n>',
    'ceiling on page requests per second across all origins (default none)',
    numberOption('--max-rps', 0),
  )
  .option('--user-agent <ua>', 'User-Agent header and robots.txt product token')
  .option(
    '--allow-host <host>',
    'let the SSRF guard fetch this host even on a private or loopback address; repeatable',
    collect,
  )
  .option(
    '--notify <url>',
    'POST signed webhooks (crawl.started, pages.changed, crawl.completed) here; needs GLEANER_WEBHOOK_SECRET; repeatable',
    collect,
  )
  .option(
    '--max-body-bytes <n>',
    'cut response bodies at this size (default 10 MiB)',
    integerOption('--max-body-bytes', 1),
  )
  .option(
    '--content-types <list>',
    'kinds of response to index, comma-separated: html,pdf,markdown,text,docx (default all)',
    listOption,
  )
  .option(
    '--lang <codes>',
    'keep the corpus to these languages, ISO 639-1 comma-separated (en,de); others are flagged wrong-language',
    listOption,
  )
  .option(
    '--soft-404-probe',
    'ask each origin once for a path that cannot exist, and flag pages that read like its answer as soft-404',
  )
  .addOption(
    new Option(
      '--render <mode>',
      'render pages in headless Chromium: auto (when the HTML needs JavaScript), always, never (default auto)',
    ).choices(['auto', 'always', 'never']),
  )
  .option('--only-due', 'recrawl only known pages due by their learned revisit interval')
  .option(
    '--llm-url <url>',
    'also summarise and tag pages with this OpenAI-compatible endpoint (or GLEANER_LLM_URL)',
  )
  .option('--llm-model <name>', 'model to ask (or GLEANER_LLM_MODEL)')
  .option(
    '--llm-api-key-file <path>',
    "file holding the endpoint's bearer key (or GLEANER_LLM_API_KEY_FILE, GLEANER_LLM_API_KEY)",
  )
  .option('--llm-api-key <key>', 'bearer key for the endpoint; visible in ps, prefer --llm-api-key-file')
  .option('--crawl-id <id>', 'id for the crawl (default: time-based)')
  .option('--wait', 'block until the crawl finishes, showing progress')
  .option('--json', 'print one JSON summary on stdout')
  .option('--local-workers', 'run workers in this process even with TEMPORAL_ADDRESS set')
  .option('--no-local-workers', 'do not run workers in this process (they run elsewhere)')
  .action(async (urls: string[], options) =>
    (await import('./crawl-command')).runCrawlCommand(urls, options),
  );

// After `crawl`: `schedule create` takes the crawl command's options.
// Describing the schedule subcommands loads the Temporal client; every other command (a cold
// `gleaner search` above all) starts without it. Help without a command lists them too; --version not.
const invoked = process.argv[2];
const describesCommands =
  invoked === undefined ||
  invoked === 'schedule' ||
  invoked === 'help' ||
  (invoked.startsWith('-') && invoked !== '--version' && invoked !== '-V');
if (describesCommands) (await import('./schedule-command')).registerScheduleCommand(program);

program
  .command('status')
  .description("show a crawl's progress or final summary")
  .argument('<crawlId>')
  .option('--json', 'print JSON')
  .action(async (crawlId: string, options) =>
    (await import('./status-command')).runStatusCommand(crawlId, options),
  );

program
  .command('robots')
  .description('show what robots.txt allows for some URLs, with the matching rule, Crawl-delay and sitemaps')
  .argument('<url...>', 'URLs to check (http or https)')
  .option('--robots-file <file>', 'read robots.txt from this file instead of fetching it (no network)')
  .option('--user-agent <ua>', 'User-Agent header and robots.txt product token')
  .option(
    '--allow-host <host>',
    'let the SSRF guard fetch this host even on a private or loopback address; repeatable',
    collect,
  )
  .option('--json', 'print one JSON line per URL')
  .action(async (urls: string[], options) =>
    (await import('./robots-command')).runRobotsCommand(urls, options),
  );

program
  .command('extract')
  .description(
    'extract title, text, Markdown and metadata from one page or document (HTML, PDF, DOCX, Markdown, text) or a manifest (no database, no Temporal)',
  )
  .argument(
    '[file-or-url]',
    'an HTML, PDF, DOCX, Markdown (.md) or text (.txt) file (.gz is gunzipped), or an http(s) URL to fetch',
  )
  .option('--url <url>', 'URL the page was served from (resolves links, canonical URL)')
  .addOption(new Option('--format <format>', 'output (default markdown)').choices(EXTRACT_FORMATS))
  .option('--manifest <file>', 'JSON lines of {"id","file","url"}; prints one JSON line per page')
  .option('--user-agent <ua>', 'User-Agent header when fetching a URL')
  .option(
    '--allow-host <host>',
    'let the SSRF guard fetch this host even on a private or loopback address; repeatable',
    collect,
  )
  .action(async (input: string | undefined, options) =>
    (await import('./extract-command')).runExtractCommand(input, options),
  );

program
  .command('search')
  .description(
    'search the corpus by meaning and words: ranked chunks with page URL, title, heading path and score',
  )
  .argument('<query...>', 'what to look for (several words are joined)')
  .option('--k <n>', 'hits to show, 1 to 100 (default 10)', integerOption('--k', 1))
  .option('--domain <host>', 'only this host and its subdomains, or one origin (scheme://host:port)')
  .option(
    '--crawl <id>',
    'only pages this crawl stored last (a 304 Not Modified leaves a page with the crawl before)',
  )
  .option('--prefix <path>', 'only URLs under this path (/docs/) or URL prefix')
  .option(
    '--per-page <n>',
    'at most this many hits from one page (default 1)',
    integerOption('--per-page', 1),
  )
  .addOption(
    new Option('--mode <mode>', 'retrievers to use (default hybrid)').choices([
      'hybrid',
      'vector',
      'fulltext',
    ]),
  )
  .option('--tag <tag>', 'only pages carrying this tag (#t or t); repeatable, all must match', collect)
  .option(
    '--include-flagged',
    'also pages the quality gate flagged (soft-404, near-empty, template-only, wrong-language)',
  )
  .option('--lang <codes>', 'only pages in these languages, ISO 639-1 comma-separated (en,de)')
  .option('--json', 'print one JSON document with the hits')
  .action(async (words: string[], options) =>
    (await import('./search-command')).runSearchCommand(words.join(' '), options),
  );

program
  .command('context')
  .description(
    'passages an LLM can cite: the best chunks for a question within a token budget, numbered with URL and heading path',
  )
  .argument('<question...>', 'the question (several words are joined)')
  .option(
    '--budget <tokens>',
    'tokens the passages may take, 50 to 32000 (default 2000)',
    integerOption('--budget', 1),
  )
  .option(
    '--per-page <n>',
    'at most this many passages from one page, 1 to 10 (default 2)',
    integerOption('--per-page', 1),
  )
  .option('--domain <host>', 'only this host and its subdomains, or one origin (scheme://host:port)')
  .option(
    '--crawl <id>',
    'only pages this crawl stored last (a 304 Not Modified leaves a page with the crawl before)',
  )
  .option('--prefix <path>', 'only URLs under this path (/docs/) or URL prefix')
  .addOption(
    new Option('--mode <mode>', 'retrievers to use (default hybrid)').choices([
      'hybrid',
      'vector',
      'fulltext',
    ]),
  )
  .option('--tag <tag>', 'only pages carrying this tag (#t or t); repeatable, all must match', collect)
  .option('--json', 'print one JSON document with the passages')
  .action(async (words: string[], options) =>
    (await import('./context-command')).runContextCommand(words.join(' '), options),
  );

program
  .command('changes')
  .description('the change feed: new, changed, removed and duplicate pages after a cursor, oldest first')
  .option('--since <cursor>', 'a next cursor printed by an earlier run (default 0: from the start)')
  .option('--limit <n>', 'at most this many events (1..1000, default 100)')
  .option('--crawl <id>', "only this crawl's events")
  .option('--json', 'one JSON line per event, then {"nextCursor","hasMore"}')
  .action(async (options) => (await import('./changes-command')).runChangesCommand(options));

program
  .command('export')
  .description(
    'write the corpus as a Markdown tree (DIR/<host>/<path>.md with YAML frontmatter, images, llms.txt)',
  )
  .requiredOption('--out <dir>', 'folder to write (re-exporting updates it in place)')
  .option(
    '--crawl <id>',
    'only pages this crawl stored last (a 304 Not Modified leaves a page with the crawl before)',
  )
  .option('--origin <url>', 'only pages of this origin (scheme://host:port)')
  .option('--assets', 'fetch and store the images pages show (default)')
  .option('--no-assets', 'leave image links pointing at their sites')
  .option('--chunks', 'also write chunks.jsonl (text, heading path, URL, vector) for RAG loaders')
  .option('--user-agent <ua>', 'User-Agent header and robots.txt product token for image requests')
  .option(
    '--allow-host <host>',
    'let the SSRF guard fetch images from this host even on a private or loopback address; repeatable',
    collect,
  )
  .option(
    '--asset-delay-ms <ms>',
    'minimum gap between image requests to one origin (default 1000)',
    integerOption('--asset-delay-ms', 0),
  )
  .option(
    '--max-asset-bytes <n>',
    'largest image stored (default 10 MiB)',
    integerOption('--max-asset-bytes', 1),
  )
  .option('--json', 'print one JSON summary on stdout')
  .action(async (options) => (await import('./export-command')).runExportCommand(options));

program
  .command('report')
  .description(
    "the corpus's integrity report: missing chunks or vectors, model mismatches, orphans, duplicates, failures (exit 1 when inconsistent)",
  )
  .option('--json', 'print one JSON document')
  .action(async (options) => (await import('./report-command')).runReportCommand(options));

program
  .command('resume')
  .description(
    'continue a crawl: lift a pause, and on the embedded default run its workers here until it ends',
  )
  .argument('<crawlId>')
  .option('--origin <origin>', 'only lift the pause of this origin (scheme://host:port)')
  .option('--json', 'print one JSON summary on stdout when the crawl ends')
  .option('--local-workers', 'run workers in this process even with TEMPORAL_ADDRESS set')
  .option('--no-local-workers', 'only send the resume signal; workers run elsewhere')
  .action(async (crawlId: string, options) =>
    (await import('./resume-command')).runResumeCommand(crawlId, options),
  );

for (const action of ['pause', 'cancel'] as const) {
  program
    .command(action)
    .description(`${action} a running crawl, or one of its origins`)
    .argument('<crawlId>')
    .option('--origin <origin>', 'only this origin (scheme://host:port)')
    .option('--reason <text>', 'recorded with a cancel')
    .action(async (crawlId: string, options) =>
      (await import('./control-command')).runControlCommand(action, crawlId, options),
    );
}

program
  .command('dev')
  .description('run the whole stack in the foreground on the embedded default')
  .option('--api-host <host>', `address the HTTP API listens on (default ${DEFAULT_API_HOST})`)
  .option(
    '--api-port <port>',
    `HTTP API port (default ${DEFAULT_API_PORT}, or a free one if taken)`,
    integerOption('--api-port', 0, MAX_PORT),
  )
  .action(async (options: { apiHost?: string; apiPort?: number }) =>
    (await import('./serve-commands')).runDevCommand({
      ...(options.apiHost ? { host: options.apiHost } : {}),
      ...(options.apiPort !== undefined ? { port: options.apiPort } : {}),
    }),
  );

program
  .command('api')
  .description('serve the HTTP API (search, pages, graph, crawls, /healthz, /metrics)')
  .option('--host <host>', `address to listen on (default ${DEFAULT_API_HOST})`)
  .option(
    '--port <port>',
    `port to listen on (default ${DEFAULT_API_PORT})`,
    integerOption('--port', 0, MAX_PORT),
  )
  .option(
    '--allowed-host <name>',
    'a Host name clients use besides loopback ones (or GLEANER_API_HOSTS); repeatable',
    collect,
  )
  .action(async (options: { host?: string; port?: number; allowedHost?: string[] }) =>
    // Loaded on use: Fastify would slow every other command's start.
    (await import('./api-command')).runApiCommand(options),
  );

program
  .command('worker')
  .description('run workers for some task queues (for real deployments)')
  .option(
    '--queues <list>',
    `comma-separated queues from ${QUEUE_KINDS.join(', ')} (default all)`,
    (value, previous: string[]) => {
      const queues = listOption(value, previous);
      for (const queue of queues) {
        if (!(QUEUE_KINDS as string[]).includes(queue)) {
          throw new InvalidArgumentError(
            `unknown queue "${queue}"; expected some of ${QUEUE_KINDS.join(', ')}`,
          );
        }
      }
      return queues;
    },
  )
  .action(async (options: { queues?: QueueKind[] }) =>
    (await import('./serve-commands')).runWorkerCommand(options.queues ?? QUEUE_KINDS),
  );

program
  .command('mcp')
  .description(
    'serve the corpus to AI agents over MCP on stdio (search, fetch_page, get_context, list_sources, crawl_status)',
  )
  .option('--allow-crawl', 'also offer start_crawl and recrawl (the agent may then make this machine crawl)')
  .option(
    '--allow-host <host>',
    'with --allow-crawl: a host those crawls may fetch on a private or loopback address; repeatable',
    collect,
  )
  .action(async (options: { allowCrawl?: boolean; allowHost?: string[] }) =>
    (await import('./mcp-command')).runMcpCommand(options),
  );

/**
 * Exits once no model thread is inside onnxruntime-node: process.exit stops worker threads on the
 * spot, and one stopped while its model loads (a command that failed early, while the model its
 * workers would use was still loading) or runs aborts the process, exit 134 instead of its own
 * status (embed/live-threads.ts). Commands that never started one wait for nothing.
 */
async function exit(code: number): Promise<never> {
  try {
    await stopLiveThreads();
  } catch {}
  process.exit(code);
}

try {
  await program.parseAsync(process.argv);
  await exit(0);
} catch (error) {
  const code = (error as { code?: string }).code;
  if (code?.startsWith('commander.')) {
    // Commander already printed its message (help, version, or a usage error). Thrown while parsing,
    // before any command ran: no thread to wait for.
    const exitCode = (error as { exitCode?: number }).exitCode ?? 2;
    process.exit(exitCode === 0 ? 0 : 2);
  }
  if (isUserFacing(error)) {
    process.stderr.write(`gleaner: ${(error as Error).message}\n`);
    const name = (error as Error).name;
    const partFailed =
      name === 'CrawlFailedError' || name === 'InconsistentStoreError' || name === 'ManifestLinesFailedError';
    await exit(partFailed ? 1 : name === 'InterruptedError' ? 130 : 2);
  }
  try {
    logger.error({ err: error }, 'unexpected failure');
  } catch {
    // The log file itself may be what failed (its folder cannot be made): stderr still tells.
  }
  process.stderr.write(`gleaner: unexpected error: ${(error as Error).message ?? String(error)}\n`);
  await exit(1);
}
