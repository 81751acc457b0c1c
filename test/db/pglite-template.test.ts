/**
 * New embedded stores copied from the migrated PGlite template (db/pglite-template.ts): a copy has
 * every migration and the schema the old path (initdb, then migrate) makes, takes writes, and is
 * independent of other copies; a cache that cannot be written falls back to the old path; a
 * template of another key is never used (and is pruned when the current one is built); two
 * processes building the template at once both succeed.
 * Each test uses a cache folder of its own, so none depends on what the shared one holds.
 */
import { spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Database } from '../../db/database';
import { loadMigrations, migrate } from '../../db/migrate';
import { PgliteDatabase } from '../../db/pglite-database';
import { templateCacheDir, templateKey } from '../../db/pglite-template';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const MIGRATIONS = loadMigrations().map((migration) => ({
  version: migration.version,
  name: migration.name,
}));

let dir: string;
let cache: string;

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-pglite-template-'));
  cache = path.join(dir, 'cache');
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});
afterEach(() => {
  vi.restoreAllMocks();
});

async function openStore(name: string, templateCacheDir: string | false = cache): Promise<PgliteDatabase> {
  return PgliteDatabase.open({ dataDir: path.join(dir, name, 'pgdata'), socket: false, templateCacheDir });
}

async function migrationsOf(db: Database): Promise<{ version: number; name: string }[]> {
  const { rows } = await db.query<{ version: number; name: string }>(
    'SELECT version, name FROM schema_migrations ORDER BY version',
  );
  return rows;
}

/** Everything migrations make, read from the catalogs, in a stable order. */
async function schemaOf(db: Database): Promise<Record<string, unknown[]>> {
  const read = async (sql: string) => (await db.query(sql)).rows;
  return {
    columns: await read(
      `SELECT table_name, column_name, data_type, udt_name, column_default, is_nullable, character_maximum_length
         FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, column_name`,
    ),
    indexes: await read(
      `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY indexname`,
    ),
    constraints: await read(
      `SELECT c.conrelid::regclass::text AS rel, c.conname, pg_get_constraintdef(c.oid) AS def
         FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
        WHERE n.nspname = 'public' ORDER BY rel, c.conname`,
    ),
    triggers: await read(
      `SELECT tgname, pg_get_triggerdef(t.oid) AS def FROM pg_trigger t WHERE NOT tgisinternal ORDER BY tgname`,
    ),
    functions: await read(
      `SELECT p.proname, pg_get_function_identity_arguments(p.oid) AS args, md5(p.prosrc) AS src
         FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = 'public' ORDER BY p.proname, args`,
    ),
    views: await read(
      `SELECT viewname, definition FROM pg_views WHERE schemaname = 'public' ORDER BY viewname`,
    ),
    extensions: await read('SELECT extname, extversion FROM pg_extension ORDER BY extname'),
    tsconfigs: await read('SELECT cfgname FROM pg_ts_config ORDER BY cfgname'),
    sequences: await read(
      `SELECT sequencename, start_value, last_value FROM pg_sequences WHERE schemaname = 'public' ORDER BY sequencename`,
    ),
  };
}

describe('stores made from the migrated PGlite template', () => {
  it('have every migration and the old path’s schema, take writes, and are independent', async () => {
    const a = await openStore('a');
    const b = await openStore('b');
    // The old path, as a cache that cannot be written gets it: a cache "folder" under a regular
    // file is ENOTDIR even for root, whom file modes do not stop.
    const blocker = path.join(dir, 'not-a-folder');
    writeFileSync(blocker, '');
    const said: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
      said.push(String(chunk));
      return (write as (chunk: string | Uint8Array, ...rest: unknown[]) => boolean)(chunk, ...rest);
    });
    const old = await openStore('old', path.join(blocker, 'cache'));
    try {
      expect(said.join('')).toMatch(
        /could not make the store from the PGlite template .*initialising .* directly/,
      );
      expect(readFileSync(blocker, 'utf8')).toBe('');
      const key = templateKey();
      expect(readdirSync(cache)).toEqual([key]);
      expect(statSync(path.join(dir, 'a', 'pgdata')).mode & 0o777).toBe(0o700);
      // Nothing left to apply: the copy came migrated. The old path's store gets them all now, and
      // then works as the copies do.
      expect(await migrate(a)).toEqual([]);
      expect(await migrate(b)).toEqual([]);
      expect(await migrate(old)).toEqual(MIGRATIONS.map((migration) => migration.version));
      expect(await migrationsOf(a)).toEqual(MIGRATIONS);
      expect(await migrationsOf(old)).toEqual(MIGRATIONS);
      const schema = await schemaOf(a);
      expect((schema.indexes as unknown[]).length).toBeGreaterThan(10);
      expect(schema).toEqual(await schemaOf(old));

      await a.query("INSERT INTO crawls (id, spec) VALUES ('only-in-a', '{}')");
      await a.query(
        "INSERT INTO pages (url, final_url, origin, crawl_id, depth) VALUES ('http://127.0.0.1/x', 'http://127.0.0.1/x', 'http://127.0.0.1', 'only-in-a', 0)",
      );
      const inA = await a.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM crawls WHERE id = 'only-in-a'",
      );
      const inB = await b.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM crawls WHERE id = 'only-in-a'",
      );
      expect(inA.rows[0]?.n).toBe(1);
      expect(inB.rows[0]?.n).toBe(0);
      await old.query("INSERT INTO crawls (id, spec) VALUES ('old-path', '{}')");
      expect((await old.query("SELECT id FROM crawls WHERE id = 'old-path'")).rows).toHaveLength(1);
      const distance = await b.query<{ d: number }>("SELECT '[1,0]'::vector <=> '[0,1]'::vector AS d");
      expect(distance.rows[0]?.d).toBeCloseTo(1);
    } finally {
      await Promise.all([a.close(), b.close(), old.close()]);
    }
    // The write survives a reopen of its own store, and the next copy does not see it.
    const again = await openStore('a');
    const c = await openStore('c');
    try {
      expect((await again.query("SELECT id FROM crawls WHERE id = 'only-in-a'")).rows).toHaveLength(1);
      expect((await c.query("SELECT id FROM crawls WHERE id = 'only-in-a'")).rows).toHaveLength(0);
      expect(await migrationsOf(c)).toEqual(MIGRATIONS);
    } finally {
      await Promise.all([again.close(), c.close()]);
    }
  });

  it('never uses a template of another key', async () => {
    const key = templateKey();
    // A template of another key (an older migration set, say), listed before the current one, that
    // holds a row the current one lacks.
    const other = path.join(cache, '0'.repeat(24));
    cpSync(path.join(cache, key), other, { recursive: true });
    const marked = await PgliteDatabase.open({ dataDir: path.join(other, 'pgdata'), socket: false });
    await marked.query("INSERT INTO crawls (id, spec) VALUES ('from-the-other-key', '{}')");
    await marked.close();
    expect(readdirSync(cache).sort()).toEqual([path.basename(other), key]);

    const store = await openStore('d');
    try {
      expect((await store.query("SELECT id FROM crawls WHERE id = 'from-the-other-key'")).rows).toHaveLength(
        0,
      );
      expect(await migrationsOf(store)).toEqual(MIGRATIONS);
    } finally {
      await store.close();
    }
    rmSync(other, { recursive: true });
  });

  it('keeps the lock, the socket password and copies left by a dead opener per store, outside the template', async () => {
    // A copy a previous opener of store "s1" left when it died mid-copy.
    const leftover = path.join(dir, 's1', '.pgdata.from-template-999999999-0badc0de');
    mkdirSync(path.join(leftover, 'base'), { recursive: true });
    const s1 = await PgliteDatabase.open({
      dataDir: path.join(dir, 's1', 'pgdata'),
      templateCacheDir: cache,
    });
    const s2 = await PgliteDatabase.open({
      dataDir: path.join(dir, 's2', 'pgdata'),
      templateCacheDir: cache,
    });
    try {
      expect(existsSync(leftover)).toBe(false);
      expect(readdirSync(path.join(dir, 's1')).sort()).toEqual([
        'pgdata',
        'pgdata.lock',
        'pgdata.password',
        'pgdata.socket',
      ]);
      const passwords = ['s1', 's2'].map((name) =>
        readFileSync(path.join(dir, name, 'pgdata.password'), 'utf8'),
      );
      expect(passwords[0]).not.toBe(passwords[1]);
      expect(statSync(path.join(dir, 's1', 'pgdata.password')).mode & 0o777).toBe(0o600);
      const template = path.join(cache, templateKey());
      expect(readdirSync(template).sort()).toEqual(['pgdata', 'template.json']);
      expect(
        readdirSync(path.join(template, 'pgdata')).filter((file) => /lock|password|\.pid$/.test(file)),
      ).toEqual([]);
      expect(s1.socketUrl).not.toBe(s2.socketUrl);
    } finally {
      await Promise.all([s1.close(), s2.close()]);
    }
  });

  it('keys the template by its migrations', () => {
    const copy = path.join(dir, 'migrations-copy');
    cpSync(path.join(ROOT, 'db', 'migrations'), copy, { recursive: true });
    expect(templateKey(copy)).toBe(templateKey());
    writeFileSync(path.join(copy, '999_later.sql'), 'CREATE TABLE later (id int);\n');
    expect(templateKey(copy)).not.toBe(templateKey());
    writeFileSync(path.join(copy, '999_later.sql'), 'CREATE TABLE later (id bigint);\n');
    const changed = templateKey(copy);
    writeFileSync(path.join(copy, '999_later.sql'), 'CREATE TABLE later (id int);\n');
    expect(templateKey(copy)).not.toBe(changed);
  });

  it('reads GLEANER_PGLITE_TEMPLATE: off, or a folder', () => {
    vi.stubEnv('GLEANER_PGLITE_TEMPLATE', 'off');
    expect(templateCacheDir()).toBeUndefined();
    vi.stubEnv('GLEANER_PGLITE_TEMPLATE', '/var/tmp/gleaner-templates');
    expect(templateCacheDir()).toBe('/var/tmp/gleaner-templates');
    expect(templateCacheDir(false)).toBeUndefined();
    vi.stubEnv('GLEANER_PGLITE_TEMPLATE', '');
    expect(templateCacheDir()).toBe(path.join(ROOT, 'node_modules', '.cache', 'gleaner-pglite-template'));
    vi.unstubAllEnvs();
  });

  it('lets two processes build the template at once, and both get a working store', async () => {
    const shared = path.join(dir, 'shared-cache');
    const key = templateKey();
    // Left from before: a template of another key, and a build whose process died.
    mkdirSync(path.join(shared, 'a'.repeat(24), 'pgdata'), { recursive: true });
    mkdirSync(path.join(shared, `.${key}.building-999999999-0badc0de`), { recursive: true });
    const script = `
      import { existsSync } from 'node:fs';
      import path from 'node:path';
      const { PgliteDatabase } = await import(${JSON.stringify(pathToFileURL(path.join(ROOT, 'db', 'pglite-database.ts')).href)});
      const { migrate } = await import(${JSON.stringify(pathToFileURL(path.join(ROOT, 'db', 'migrate.ts')).href)});
      const [dataDir, cache, key] = process.argv.slice(-3);
      const templateBefore = existsSync(path.join(cache, key));
      const db = await PgliteDatabase.open({ dataDir, socket: false, templateCacheDir: cache });
      const applied = await migrate(db);
      const { rows } = await db.query('SELECT count(*)::int AS n FROM schema_migrations');
      await db.query("INSERT INTO crawls (id, spec) VALUES ('x', '{}')");
      await db.close();
      process.stdout.write(JSON.stringify({ templateBefore, applied, migrations: rows[0].n }));
    `;
    const run = (name: string) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
        const child = spawn(
          process.execPath,
          [
            '--import',
            'tsx',
            '--input-type=module',
            '-e',
            script,
            '--',
            path.join(dir, name, 'pgdata'),
            shared,
            key,
          ],
          { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
        );
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk;
        });
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk;
        });
        child.once('error', reject);
        child.once('exit', (code) => resolve({ code, stdout, stderr }));
      });
    const results = await Promise.all([run('p1'), run('p2')]);
    for (const result of results) {
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual({
        templateBefore: false,
        applied: [],
        migrations: MIGRATIONS.length,
      });
    }
    expect(readdirSync(shared)).toEqual([key]);
    expect(existsSync(path.join(shared, key, 'pgdata', 'PG_VERSION'))).toBe(true);
  });
});
