/**
 * Numbered SQL migrations (`db/migrations/NNN_name.sql`), applied in order, each once, each in
 * its own transaction, recorded in `schema_migrations`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Database } from './database';

const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((file) => /^\d{3}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number.parseInt(file.slice(0, 3), 10),
      name: file.slice(4, -4),
      sql: readFileSync(path.join(dir, file), 'utf8'),
    }));
}

/** Applies pending migrations; returns the versions applied. Safe to run concurrently on Postgres. */
export async function migrate(db: Database, migrations = loadMigrations()): Promise<number[]> {
  // The common case, every migration applied, in two reads instead of a transaction per migration
  // (a cold `gleaner search` on PGlite spent ~0.1-0.3 s of CPU on those).
  if (await allApplied(db, migrations)) return [];
  await db.exec(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
  );
  const applied: number[] = [];
  for (const migration of migrations) {
    const done = await db.transaction(async (tx) => {
      // Serialises concurrent migrators (several workers starting at once) on native Postgres.
      if (db.kind === 'postgres') await tx.query('SELECT pg_advisory_xact_lock(4242001)');
      const seen = await tx.query('SELECT 1 FROM schema_migrations WHERE version = $1', [migration.version]);
      if (seen.rows.length > 0) return false;
      for (const statement of splitStatements(migration.sql)) await tx.query(statement);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
        migration.version,
        migration.name,
      ]);
      return true;
    });
    if (done) applied.push(migration.version);
  }
  return applied;
}

/** True when `schema_migrations` exists and records every one of `migrations`. */
async function allApplied(db: Database, migrations: readonly Migration[]): Promise<boolean> {
  const table = await db.query<{ present: boolean }>(
    "SELECT to_regclass('schema_migrations') IS NOT NULL AS present",
  );
  if (!table.rows[0]?.present) return false;
  const { rows } = await db.query<{ version: number }>('SELECT version FROM schema_migrations');
  const applied = new Set(rows.map((row) => Number(row.version)));
  return migrations.every((migration) => applied.has(migration.version));
}

/** Our migrations keep to plain statements separated by `;` at line ends (no function bodies yet). */
function splitStatements(sql: string): string[] {
  return sql
    .split(/;\s*$/m)
    .map((statement) => statement.replace(/^\s*--.*$/gm, '').trim())
    .filter((statement) => statement.length > 0);
}
