/**
 * The embedded store's private files (issue 28): the password file is made 0600 and reused, one that
 * others could read or a symlink is not trusted, a folder every user may write is refused, and
 * connection strings reach messages without their passwords.
 */
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { psqlLines } from '../../cli/dev-banner';
import { redact } from '../../db/pg-database';
import { acquireLock } from '../../db/pglite-database';
import {
  ensurePrivateDir,
  InsecureStoreFileError,
  loadOrCreateSocketPassword,
  readSocketPassword,
  SOCKET_NAME,
  socketFolder,
  withoutPassword,
  withPassword,
} from '../../db/store-files';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-store-files-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the socket password file', () => {
  it('is made random and 0600 on first use and reused after', () => {
    const file = path.join(dir, 'first.password');
    const password = loadOrCreateSocketPassword(file);
    expect(password).toMatch(/^[\w-]{32}$/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(loadOrCreateSocketPassword(file)).toBe(password);
    expect(readSocketPassword(file)).toBe(password);
    expect(loadOrCreateSocketPassword(path.join(dir, 'other.password'))).not.toBe(password);
  });

  it('is not trusted when others may read it, and is replaced by the store that owns it', () => {
    const file = path.join(dir, 'open.password');
    writeFileSync(file, 'everyone-knows-this\n', { mode: 0o644 });
    chmodSync(file, 0o644);
    expect(() => readSocketPassword(file)).toThrow(InsecureStoreFileError);
    const fresh = loadOrCreateSocketPassword(file);
    expect(fresh).not.toBe('everyone-knows-this');
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('is never read through a symlink', () => {
    const target = path.join(dir, 'target.password');
    writeFileSync(target, 'planted\n', { mode: 0o600 });
    const link = path.join(dir, 'link.password');
    symlinkSync(target, link);
    expect(() => readSocketPassword(link)).toThrow(/ELOOP|symbolic link/);
  });
});

describe('the store folder and lock', () => {
  it('creates the folder private and refuses one every user may write', () => {
    const fresh = path.join(dir, 'fresh-home');
    ensurePrivateDir(fresh);
    expect(statSync(fresh).mode & 0o777).toBe(0o700);
    const shared = path.join(dir, 'shared-home');
    mkdirSync(shared);
    chmodSync(shared, 0o777);
    expect(() => ensurePrivateDir(shared)).toThrow(InsecureStoreFileError);
    expect(() => acquireLock(path.join(shared, 'pgdata.lock'))).toThrow(/writable by every user/);
  });

  it('writes the lock 0600 and never with a password in it', () => {
    const lockFile = path.join(dir, 'lock-home', 'pgdata.lock');
    const update = acquireLock(lockFile);
    expect(statSync(lockFile).mode & 0o777).toBe(0o600);
    update({ databaseUrl: 'postgres://postgres:hunter2@127.0.0.1:5555/postgres?sslmode=disable' });
    const lock = readFileSync(lockFile, 'utf8');
    expect(lock).not.toContain('hunter2');
    expect(JSON.parse(lock).databaseUrl).toBe('postgres://postgres@127.0.0.1:5555/postgres?sslmode=disable');
    expect(statSync(lockFile).mode & 0o777).toBe(0o600);
  });

  it('puts a password into a URL and takes it out', () => {
    const url = withPassword('postgres://postgres@127.0.0.1:5555/postgres?sslmode=disable', 'a-b_c');
    expect(url).toBe('postgres://postgres:a-b_c@127.0.0.1:5555/postgres?sslmode=disable');
    expect(withoutPassword(url)).toBe('postgres://postgres@127.0.0.1:5555/postgres?sslmode=disable');
  });
});

describe('connection strings in messages', () => {
  it('redacts URL passwords, password parameters and libpq settings', () => {
    expect(redact('postgres://u:s3cret@db:5432/x')).toBe('postgres://u:***@db:5432/x');
    expect(redact('postgres://u:p@ss/w@db/x')).toBe('postgres://u:***@db/x');
    expect(redact('postgres://db/x?password=s3cret&sslmode=require')).toBe(
      'postgres://db/x?password=***&sslmode=require',
    );
    expect(redact("host=db password='s 3cret' user=u")).toBe('host=db password=*** user=u');
    expect(redact('failed at postgres://a:one@h/x and postgres://b:two@k/y')).not.toMatch(/one|two/);
    expect(redact('postgres://u@db/x')).toBe('postgres://u@db/x');
  });

  it('gleaner dev shows an operator DATABASE_URL without its password, the embedded psql URL whole', () => {
    const native = psqlLines({ databaseUrl: 'postgres://app:s3cret@db.internal/gleaner', embedded: false });
    expect(native.join('\n')).not.toContain('s3cret');
    expect(native.join('\n')).toContain('postgres://app:***@db.internal/gleaner');
    const embedded = psqlLines({
      databaseUrl: 'postgres://postgres:pw@127.0.0.1:1/postgres',
      embedded: true,
    });
    expect(embedded[0]).toContain('postgres://postgres:pw@127.0.0.1:1/postgres');
    expect(embedded.join('\n')).toMatch(/keep it to yourself/);
  });
});

describe("the socket's folder", () => {
  it("is private and beside the store, and a dead holder's socket in it is cleared for the next", () => {
    const dataDir = path.join(dir, 'socket-home', 'pgdata');
    mkdirSync(dataDir, { recursive: true });
    const folder = socketFolder(dataDir);
    expect(folder).toBe(`${dataDir}.socket`);
    expect(statSync(folder).mode & 0o777).toBe(0o700);
    // A process killed while serving leaves its socket behind; the store's next holder reuses the folder.
    writeFileSync(path.join(folder, SOCKET_NAME), '');
    expect(socketFolder(dataDir)).toBe(folder);
    expect(existsSync(path.join(folder, SOCKET_NAME))).toBe(false);
  });

  it('replaces a folder others may enter, and a symlink, instead of listening there', () => {
    const dataDir = path.join(dir, 'loose-home', 'pgdata');
    mkdirSync(`${dataDir}.socket`, { recursive: true });
    chmodSync(`${dataDir}.socket`, 0o755);
    expect(statSync(socketFolder(dataDir)).mode & 0o777).toBe(0o700);

    const elsewhere = path.join(dir, 'elsewhere');
    mkdirSync(elsewhere);
    const linked = path.join(dir, 'linked-home', 'pgdata');
    mkdirSync(path.dirname(linked), { recursive: true });
    symlinkSync(elsewhere, `${linked}.socket`);
    const folder = socketFolder(linked);
    expect(lstatSync(folder).isSymbolicLink()).toBe(false);
    expect(lstatSync(folder).isDirectory()).toBe(true);
    expect(existsSync(elsewhere)).toBe(true);
  });

  it('falls back to a fresh private folder in the system temp when the store path is too long for a socket', () => {
    const dataDir = path.join(dir, 'x'.repeat(90), 'pgdata');
    const folder = socketFolder(dataDir);
    try {
      expect(path.dirname(folder)).toBe(os.tmpdir());
      expect(path.basename(folder)).toMatch(/^gleaner-store-/);
      expect(statSync(folder).mode & 0o777).toBe(0o700);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
