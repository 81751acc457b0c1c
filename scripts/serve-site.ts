/**
 * Serves a bundled documentation site (fixtures/sites/<name>.tar.gz) on 127.0.0.1 for a manual
 * or quick-start crawl: `npx tsx scripts/serve-site.ts skopt-0.9 [port]`. Prints the URL.
 */
import { serveSite } from '../testbed/site-server';
import { unpackSite } from '../testbed/sites';

const name = process.argv[2] ?? 'skopt-0.9';
const server = await serveSite(unpackSite(name), { port: Number(process.argv[3] ?? 0) });
process.stdout.write(`${server.url}\n`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    process.stderr.write(`served ${server.log.length} requests\n`);
    process.exit(0);
  });
}
