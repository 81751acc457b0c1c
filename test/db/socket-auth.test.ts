/**
 * The embedded store's socket is a door, not a hole: it asks a password kept in a 0600 file, the
 * lock that tells where it listens is private too and holds no secret, and a client idling inside
 * a transaction is sent away so the crawl's writes go on (issue 28).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../db/migrate';
import { PgliteDatabase, readLock, socketUrlOf } from '../../db/pglite-database';
import { SOCKET_NAME, socketPasswordFile } from '../../db/store-files';
import { toolsDir } from '../../infra/tools-dir';

const run = promisify(execFile);
const IDLE_TIMEOUT_MS = 1_500;

let dir: string;
let dataDir: string;
let db: PgliteDatabase;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-socket-auth-'));
  dataDir = path.join(dir, 'home', 'pgdata');
  db = await PgliteDatabase.open({ dataDir, idleInTransactionTimeoutMs: IDLE_TIMEOUT_MS });
  await migrate(db);
});
afterAll(async () => {
  await db?.close();
  rmSync(dir, { recursive: true, force: true });
});

function socketUrl(password?: string): string {
  const url = new URL(db.socketUrl ?? '');
  url.password = password ?? '';
  return url.toString();
}

async function connect(connectionString: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString });
  client.on('error', () => {});
  await client.connect();
  return client;
}

describe('the embedded store socket', () => {
  it('listens in a private folder beside the store, not in the system temp', () => {
    expect(statSync(`${dataDir}.socket`).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(`${dataDir}.socket`, SOCKET_NAME)).isSocket()).toBe(true);
  });

  it('keeps its password in a 0600 file and its lock file 0600, in a folder others cannot write', () => {
    const passwordFile = socketPasswordFile(dataDir);
    expect(statSync(passwordFile).mode & 0o777).toBe(0o600);
    expect(statSync(`${dataDir}.lock`).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(dataDir)).mode & 0o022).toBe(0);
    const password = readFileSync(passwordFile, 'utf8').trim();
    expect(password.length).toBeGreaterThanOrEqual(24);
    // The lock says where the socket is, not how to get in.
    const lock = readFileSync(`${dataDir}.lock`, 'utf8');
    expect(lock).toContain('127.0.0.1');
    expect(lock).not.toContain(password);
    expect(new URL(db.socketUrl ?? '').password).toBe(password);
  });

  it('refuses a client with no password or a wrong one', async () => {
    await expect(connect(socketUrl())).rejects.toThrow();
    await expect(connect(socketUrl('not-the-password'))).rejects.toMatchObject({ code: '28P01' });
    const psql = await run('psql', ['-w', '-Atc', 'SELECT 1', socketUrl('wrong')]).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect(psql).toMatchObject({ code: 2 });
    expect((psql as { stderr: string }).stderr).toMatch(/password authentication failed|no password/);
  });

  it('lets pg and psql in with the password, and readers find it through the lock', async () => {
    const client = await connect(db.socketUrl ?? '');
    try {
      expect((await client.query('SELECT count(*)::int AS n FROM pages')).rows).toEqual([{ n: 0 }]);
    } finally {
      await client.end();
    }
    const psql = await run('psql', ['-w', '-Atc', "SELECT 'psql-ok'", db.socketUrl ?? '']);
    expect(psql.stdout.trim()).toBe('psql-ok');
    // What `gleaner search` and `gleaner status` connect with while a crawl holds the store.
    const holder = readLock(`${dataDir}.lock`);
    expect(holder).toBeDefined();
    const readerUrl = socketUrlOf(`${dataDir}.lock`, holder ?? { pid: 0, startedAt: '' });
    expect(readerUrl).toBe(db.socketUrl);
  });

  it('ends a client idle inside a transaction, rolls it back, and lets the waiting write through', async () => {
    const client = new pg.Client({ connectionString: db.socketUrl });
    const ended = new Promise<Error>((resolve) => client.on('error', resolve));
    await client.connect();
    await client.query('BEGIN');
    await client.query("INSERT INTO crawls (id, spec) VALUES ('idle-client', '{}')");
    const startedAt = Date.now();
    // The crawl's write waits for the client's transaction (the session is shared) ...
    await db.query("INSERT INTO crawls (id, spec) VALUES ('waiting-write', '{}')");
    const waitedMs = Date.now() - startedAt;
    // ... until the idle timeout sends the client away, not before.
    expect(waitedMs).toBeGreaterThanOrEqual(IDLE_TIMEOUT_MS - 100);
    expect(await ended).toMatchObject({ code: '25P03' });
    const rows = await db.query<{ id: string }>("SELECT id FROM crawls WHERE id LIKE '%-%' ORDER BY id");
    expect(rows.rows).toEqual([{ id: 'waiting-write' }]);
    await client.end().catch(() => {});
  }, 30_000);

  it('leaves a client alone while it keeps talking inside its transaction', async () => {
    const client = await connect(db.socketUrl ?? '');
    try {
      await client.query('BEGIN');
      // Six statements a third of the timeout apart: twice the timeout in all, never that silent.
      for (let i = 0; i < 6; i++) {
        await client.query('SELECT 1');
        await new Promise((resolve) => setTimeout(resolve, IDLE_TIMEOUT_MS / 3));
      }
      await client.query("INSERT INTO crawls (id, spec) VALUES ('talking-client', '{}')");
      await client.query('COMMIT');
    } finally {
      await client.end();
    }
    const rows = await db.query<{ id: string }>("SELECT id FROM crawls WHERE id = 'talking-client'");
    expect(rows.rows).toHaveLength(1);
  }, 30_000);

  it("does not let a client's session settings outlive it (pg_dump empties search_path)", async () => {
    const client = await connect(db.socketUrl ?? '');
    await client.query("SELECT set_config('search_path', '', false)");
    // While it is connected the shared session has its setting (PGlite is one session).
    await expect(client.query('SELECT count(*) FROM pages')).rejects.toThrow(/does not exist/);
    await client.end();
    // Reset when its session ends; the owner's unqualified queries work again.
    await expect
      .poll(async () => (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM pages')).rows, {
        timeout: 5_000,
      })
      .toEqual([{ n: 0 }]);
    // pg_dump itself, through the socket, leaves the store usable.
    const dump = await run(path.join(toolsDir(), 'pg', 'bin', 'pg_dump'), [
      '--schema-only',
      '-d',
      db.socketUrl ?? '',
    ]);
    expect(dump.stdout).toContain('CREATE TABLE public.pages');
    await expect
      .poll(async () => (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM pages')).rows, {
        timeout: 5_000,
      })
      .toEqual([{ n: 0 }]);
  });

  it('keeps the password when the store is opened again', async () => {
    const before = readFileSync(socketPasswordFile(dataDir), 'utf8');
    await db.close();
    db = await PgliteDatabase.open({ dataDir, idleInTransactionTimeoutMs: IDLE_TIMEOUT_MS });
    expect(readFileSync(socketPasswordFile(dataDir), 'utf8')).toBe(before);
    expect(new URL(db.socketUrl ?? '').password).toBe(before.trim());
  });
});
