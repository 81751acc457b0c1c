// Creates a new PGlite data directory (initdb) in a process of its own, then exits. initdb in
// WebAssembly peaks at ~830 MB of RSS and leaves ~150 MB behind in the process that ran it (measured:
// open + migrate of a fresh directory VmHWM 905 MB, RSS 525 MB after; of an existing one 372 / 372 MB),
// so the long-lived gleaner process only ever opens a directory that exists. Plain JavaScript: it
// runs without the TypeScript loader. Usage: node db/pglite-initdb.mjs DATA_DIR
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';

const dataDir = process.argv[2];
if (!dataDir) {
  process.stderr.write('usage: pglite-initdb.mjs DATA_DIR\n');
  process.exit(2);
}
const pg = await PGlite.create(dataDir, { extensions: { vector } });
await pg.close();
