/**
 * A migrated PGlite data directory, kept once per version of what makes it, that new embedded
 * stores are copied from. initdb in WebAssembly and the twenty-odd migrations cost a new store
 * ~5.6 s of wall and ~9.6 s of CPU before a crawl could start (issue 30); a copy of the same
 * 40 MB directory costs a fraction of that. The template is made by db/pglite-initdb.mjs --migrate
 * in a short-lived child (initdb's ~830 MB peak never reaches the long-lived process), running
 * db/migrate.ts itself, so a store from the template is one the old path would have made, with
 * `schema_migrations` recording the template's build time.
 *
 * Cached under node_modules/.cache/gleaner-pglite-template/<key>/ (as the workflow bundle is,
 * workers/workflow-bundle.ts), keyed by a hash of the PGlite and pgvector package versions, every
 * migration file and the scripts that make it: a new migration or a package bump makes a new
 * template, and the old ones are pruned. GLEANER_PGLITE_TEMPLATE=off turns it off (initdb in the
 * store's own directory, migrated by its opener, as before); a directory there moves the cache.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  chmodSync,
  constants,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..');
const INITDB_SCRIPT = path.join(HERE, 'pglite-initdb.mjs');
const MIGRATIONS_DIR = path.join(HERE, 'migrations');
export const DEFAULT_TEMPLATE_CACHE_DIR = path.join(
  ROOT,
  'node_modules',
  '.cache',
  'gleaner-pglite-template',
);
/** What builds the template and what a store is made of besides the migrations. */
const MAKER_FILES = ['pglite-initdb.mjs', 'pglite-migrate-body.ts', 'migrate.ts', 'pglite-template.ts'];
/** Raised when this module changes how a template is laid out, so older caches are not read. */
const LAYOUT = 'layout-1';
/** The template's data directory inside `<cache>/<key>/`. */
const DATA = 'pgdata';

/**
 * The cache folder to use, or undefined when templates are off: `option` when given (false turns
 * them off), else GLEANER_PGLITE_TEMPLATE (`off`, or a folder), else the default under node_modules.
 */
export function templateCacheDir(option?: string | false): string | undefined {
  if (option === false) return undefined;
  if (option !== undefined) return path.resolve(option);
  const value = process.env.GLEANER_PGLITE_TEMPLATE?.trim();
  if (!value) return DEFAULT_TEMPLATE_CACHE_DIR;
  if (value === 'off') return undefined;
  return path.resolve(value);
}

/** Version of an installed package, read from its own package.json as Node resolves it from here. */
function packageVersion(name: string): string {
  let dir = path.dirname(createRequire(import.meta.url).resolve(name));
  for (;;) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest)) {
      const parsed = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string; version?: string };
      if (parsed.name === name && parsed.version) return parsed.version;
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`cannot find the version of ${name}`);
    dir = parent;
  }
}

/** The key of the template the current packages, migrations and maker scripts make. */
export function templateKey(migrationsDir = MIGRATIONS_DIR): string {
  const hash = createHash('sha256');
  hash.update(`${LAYOUT}\0`);
  for (const name of ['@electric-sql/pglite', '@electric-sql/pglite-pgvector'])
    hash.update(`${name}@${packageVersion(name)}\0`);
  for (const file of readdirSync(migrationsDir).sort()) {
    hash.update(`migrations/${file}\0`);
    hash.update(readFileSync(path.join(migrationsDir, file)));
  }
  for (const file of MAKER_FILES) {
    hash.update(`${file}\0`);
    hash.update(readFileSync(path.join(HERE, file)));
  }
  return hash.digest('hex').slice(0, 24);
}

/**
 * Runs db/pglite-initdb.mjs for `dataDir` in a child process and waits for it; with `migrate` the
 * child applies every migration too.
 */
export function initdbInChild(dataDir: string, options: { migrate?: boolean } = {}): Promise<void> {
  const args = [INITDB_SCRIPT, dataDir, ...(options.migrate ? ['--migrate'] : [])];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk).slice(-4000);
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (code === 0) resolve();
      else
        reject(
          new Error(
            `initialising the embedded store in ${dataDir} failed (${signal ?? `exit ${code}`}): ${stderr.trim()}`,
          ),
        );
    });
  });
}

/** `.<name>.<tag>-<pid>-…`: a folder some process is writing, which only that process may remove. */
function workingName(name: string, tag: string): string {
  return `.${name}.${tag}-${process.pid}-${randomBytes(4).toString('hex')}`;
}

function pidOfWorkingName(entry: string): number | undefined {
  const match = /\.[a-z-]+-(\d+)-[0-9a-f]+$/.exec(entry);
  return match ? Number(match[1]) : undefined;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes templates of other keys, and the half-built ones of processes that died building them. */
function pruneOtherTemplates(cacheDir: string, key: string): void {
  for (const entry of readdirSync(cacheDir)) {
    if (entry === key) continue;
    if (entry.startsWith('.')) {
      const pid = pidOfWorkingName(entry);
      if (pid !== undefined && processAlive(pid)) continue;
    }
    rmSync(path.join(cacheDir, entry), { recursive: true, force: true });
  }
}

/** The data directory of the current template in `cacheDir`, when it has been built. */
export function currentTemplate(cacheDir: string): string | undefined {
  const ready = path.join(cacheDir, templateKey(), DATA);
  return existsSync(path.join(ready, 'PG_VERSION')) ? ready : undefined;
}

/**
 * The data directory of the current template in `cacheDir`, built first if it is missing. Two
 * processes may build at once (two test forks): each builds in a folder of its own and renames it
 * into place; the loser finds the winner's template there and uses it.
 */
export async function ensureTemplate(cacheDir: string): Promise<string> {
  const key = templateKey();
  const ready = path.join(cacheDir, key, DATA);
  if (existsSync(path.join(ready, 'PG_VERSION'))) return ready;
  mkdirSync(cacheDir, { recursive: true });
  const building = path.join(cacheDir, workingName(key, 'building'));
  try {
    mkdirSync(path.join(building, DATA), { recursive: true, mode: 0o700 });
    await initdbInChild(path.join(building, DATA), { migrate: true });
    const migrations = readdirSync(MIGRATIONS_DIR).filter((file) => file.endsWith('.sql'));
    writeFileSync(
      path.join(building, 'template.json'),
      `${JSON.stringify({ key, builtAt: new Date().toISOString(), migrations }, null, 1)}\n`,
    );
    try {
      renameSync(building, path.join(cacheDir, key));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Another builder got there first: its template is as good as this one.
      if (!(code === 'ENOTEMPTY' || code === 'EEXIST') || !existsSync(path.join(ready, 'PG_VERSION')))
        throw error;
    }
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
  pruneOtherTemplates(cacheDir, key);
  return ready;
}

/**
 * Copies the directory tree `from` to the new `to`, keeping modes. Synchronous and one file at a
 * time: creating the ~1,070 files is the kernel's work (~1 ms of system CPU each on this ext4, the
 * whole copy ~1.1 s at load 1.4, so the file count, not the 40 MB, is its cost); measured here,
 * parallel copies (fs.promises) took longer, and starting them beside PGlite's load won nothing,
 * and fs.cpSync spent ~0.3 s more CPU on its checks.
 */
function copyTree(from: string, to: string): void {
  mkdirSync(to, { mode: statSync(from).mode & 0o7777 });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    if (entry.isDirectory()) copyTree(source, target);
    else if (entry.isFile()) copyFileSync(source, target, constants.COPYFILE_EXCL);
    else throw new Error(`the template holds ${source}, neither a file nor a folder`);
  }
}

/**
 * Makes `dataDir` a copy of the current template (building it when missing). The copy is made in
 * a sibling folder and renamed into place, so `dataDir` is never half a store. Returns false, and
 * leaves `dataDir` alone, when it holds files already (what a failed initdb left: the old path
 * deals with those as it always has). The caller holds the store's lock.
 */
export async function copyTemplateInto(dataDir: string, cacheDir: string): Promise<boolean> {
  if (existsSync(dataDir) && readdirSync(dataDir).length > 0) return false;
  const template = await ensureTemplate(cacheDir);
  const parent = path.dirname(dataDir);
  const name = path.basename(dataDir);
  // Copies left by a holder of this lock that died mid-copy.
  for (const entry of readdirSync(parent)) {
    if (!entry.startsWith(`.${name}.from-template-`)) continue;
    const pid = pidOfWorkingName(entry);
    if (pid === undefined || !processAlive(pid))
      rmSync(path.join(parent, entry), { recursive: true, force: true });
  }
  const copy = path.join(parent, workingName(name, 'from-template'));
  try {
    copyTree(template, copy);
    chmodSync(copy, 0o700);
    // Replaces the empty directory the opener made.
    renameSync(copy, dataDir);
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
  return true;
}

/**
 * Initialises the new store `dataDir`: a copy of the migrated template when templates are on and
 * the copy can be made, else (templates off, cache not writable, any failure) initdb in a child as
 * before, left for the opener's migrate().
 */
export async function initDataDir(dataDir: string, templateOption?: string | false): Promise<void> {
  const cacheDir = templateCacheDir(templateOption);
  if (cacheDir) {
    try {
      if (await copyTemplateInto(dataDir, cacheDir)) return;
    } catch (error) {
      process.stderr.write(
        `gleaner: could not make the store from the PGlite template in ${cacheDir} (${(error as Error).message.split('\n')[0]}); initialising ${dataDir} directly\n`,
      );
    }
  }
  await initdbInChild(dataDir);
}
