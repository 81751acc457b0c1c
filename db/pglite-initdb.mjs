// Creates a new PGlite data directory (initdb) in a process of its own, then exits. initdb in
// WebAssembly peaks at ~830 MB of RSS and leaves ~150 MB behind in the process that ran it (measured:
// open + migrate of a fresh directory VmHWM 905 MB, RSS 525 MB after; of an existing one 372 / 372 MB),
// so the long-lived gleaner process only ever opens a directory that exists. With --migrate it also
// applies every migration (db/pglite-migrate-body.ts runs db/migrate.ts): how the migrated template
// of db/pglite-template.ts is made. Plain JavaScript: it runs without the TypeScript loader.
// Usage: node db/pglite-initdb.mjs DATA_DIR [--migrate]
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Imports a TypeScript module of this repository as infra/thread-body.mjs does (not imported from
 * there: db/ stands below infra/): the compiled copy when a compiled gleaner started this process
 * (it passes GLEANER_CLI_DIST down), else the source through tsx.
 */
async function importBody(relative) {
  const dist = process.env.GLEANER_CLI_DIST;
  if (dist) return import(pathToFileURL(path.join(dist, relative.replace(/\.ts$/, '.js'))).href);
  const { register } = await import('tsx/esm/api');
  register();
  return import(pathToFileURL(path.join(ROOT, relative)).href);
}

const args = process.argv.slice(2);
const dataDir = args.find((arg) => !arg.startsWith('--'));
const unknown = args.filter((arg) => arg.startsWith('--') && arg !== '--migrate');
if (!dataDir || unknown.length > 0) {
  process.stderr.write('usage: pglite-initdb.mjs DATA_DIR [--migrate]\n');
  process.exit(2);
}
const pg = await PGlite.create(dataDir, { extensions: { vector } });
try {
  if (args.includes('--migrate')) {
    const { migrateNewStore } = await importBody('db/pglite-migrate-body.ts');
    await migrateNewStore(pg);
  }
} finally {
  await pg.close();
}
