// The reference crawl of `npm run bench:pipeline`: Crawlee's CheerioCrawler at concurrency 1,
// crawl only (parse, enqueue same-origin links). The bench copies this file into a scratch folder
// under os.tmpdir() that holds @crawlee/cheerio, runs it there, and reads one JSON line from stdout.
// Usage: node crawlee-crawl.mjs <seed-url> <delay-ms> <max-pages>
import { CheerioCrawler, Configuration, log } from '@crawlee/cheerio';

const [seed, delayArg, maxPagesArg] = process.argv.slice(2);
const delayMs = Number(delayArg);
const maxPages = Number(maxPagesArg);
if (!seed || !Number.isFinite(delayMs) || !Number.isInteger(maxPages)) {
  process.stderr.write('usage: node crawlee-crawl.mjs <seed-url> <delay-ms> <max-pages>\n');
  process.exit(2);
}
log.setLevel(log.LEVELS.WARNING);

// Storage in memory only: nothing written to disk, nothing left from an earlier run.
const config = new Configuration({ persistStorage: false, purgeOnStart: true });

// Crawlee's own `sameDomainDelaySecs` keys on tldts' getDomain(), which is null for an IP address,
// so on 127.0.0.1 it never waits. The same rule as gleaner's --delay-ms is applied here instead:
// the next request starts at least delayMs after the previous response was handled.
let lastResponseMs = 0;
const markResponse = () => {
  lastResponseMs = Date.now();
};
let handled = 0;
let failed = 0;
// CPU from the first request on, so the comparison leaves out module loading on both sides.
let cpuAtFirstRequest;
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

const crawler = new CheerioCrawler(
  {
    maxConcurrency: 1,
    maxRequestsPerCrawl: maxPages,
    preNavigationHooks: [
      async () => {
        cpuAtFirstRequest ??= cpuMs();
        const waitMs = lastResponseMs + delayMs - Date.now();
        if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
      },
    ],
    async requestHandler({ enqueueLinks }) {
      markResponse();
      handled++;
      await enqueueLinks({ strategy: 'same-origin' });
    },
    errorHandler: markResponse,
    failedRequestHandler() {
      markResponse();
      failed++;
    },
  },
  config,
);

const startedMs = Date.now();
await crawler.run([seed]);
const runMs = Date.now() - startedMs;
process.stdout.write(
  `${JSON.stringify({
    handled,
    failed,
    runMs,
    cpuMs: cpuMs() - (cpuAtFirstRequest ?? 0),
    peakRssKiB: process.resourceUsage().maxRSS,
  })}\n`,
);
