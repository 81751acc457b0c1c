/**
 * Builds the migrated PGlite template new embedded stores are copied from (db/pglite-template.ts),
 * unless the current one is there already, so a new user's first `gleaner crawl` or `npm run demo`
 * skips initdb and the migrations. Run by scripts/setup.sh; quick when the template is current.
 */
import { currentTemplate, ensureTemplate, templateCacheDir } from '../db/pglite-template';

const cacheDir = templateCacheDir();
if (!cacheDir) {
  process.stdout.write('PGlite template off (GLEANER_PGLITE_TEMPLATE=off): new stores run initdb in place\n');
} else {
  try {
    const existing = currentTemplate(cacheDir);
    const started = Date.now();
    const dir = existing ?? (await ensureTemplate(cacheDir));
    const how = existing ? 'current' : `built in ${((Date.now() - started) / 1000).toFixed(1)} s`;
    process.stdout.write(`PGlite template ready: ${dir} (${how})\n`);
  } catch (error) {
    process.stderr.write(`could not build the PGlite template in ${cacheDir}: ${(error as Error).message}\n`);
    process.exitCode = 1;
  }
}
