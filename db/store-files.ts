/**
 * The embedded store's private files: the folder that holds the data, the lock and the socket
 * password, and the password itself. Another local user must neither read the password (it opens
 * the corpus through the socket) nor plant files in the folder (a lock or password of their own).
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export class InsecureStoreFileError extends Error {
  override readonly name = 'InsecureStoreFileError';
}

/** The password of a running store's socket could not be read (another user's store, a bad file). */
export class SocketPasswordError extends Error {
  override readonly name = 'SocketPasswordError';
}

/** Where the socket password of the store in `dataDir` is kept: beside it, as the lock is. */
export function socketPasswordFile(dataDir: string): string {
  return `${dataDir.replace(/\/+$/, '')}.password`;
}

/** The name pglite-socket's Unix socket takes in its folder. */
export const SOCKET_NAME = '.s.PGSQL';
/** The longest Unix socket path Linux takes (sun_path is 108 bytes, with its terminating NUL). */
const MAX_SOCKET_PATH_BYTES = 107;

/**
 * The folder of the store's Unix socket, private to this user (pglite-socket asks no password; the
 * door on 127.0.0.1 does). It is beside the store, `pgdata.socket/`, like the lock: a process killed
 * before it could remove the folder leaves it for the next one to reuse. In the system's temp, each
 * killed process left a `gleaner-store-*` folder behind for good. A store whose path is too long for
 * a socket address gets a fresh folder in the system's temp instead. Only the process holding the
 * store's lock calls this, so a socket found there is a dead process's.
 */
export function socketFolder(dataDir: string): string {
  const store = path.resolve(dataDir);
  const beside = path.join(path.dirname(store), `${path.basename(store)}.socket`);
  if (Buffer.byteLength(path.join(beside, SOCKET_NAME)) > MAX_SOCKET_PATH_BYTES)
    return mkdtempSync(path.join(os.tmpdir(), 'gleaner-store-'));
  const found = lstatOrUndefined(beside);
  // Anything but our own private folder (a file, a symlink, a folder others may enter) is replaced.
  if (found && (!found.isDirectory() || found.uid !== process.getuid?.() || (found.mode & 0o077) !== 0))
    rmSync(beside, { recursive: true, force: true });
  mkdirSync(beside, { recursive: true, mode: 0o700 });
  rmSync(path.join(beside, SOCKET_NAME), { force: true });
  return beside;
}

function lstatOrUndefined(file: string) {
  try {
    return lstatSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Creates `dir` (and its parents) private to this user when missing. An existing folder that every
 * user may write to is refused rather than changed: it may be shared on purpose (GLEANER_HOME=/tmp),
 * and whoever can write there can replace the lock or the password file.
 */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const mode = statSync(dir).mode;
  if (mode & 0o002) {
    throw new InsecureStoreFileError(
      `${dir} is writable by every user (mode ${(mode & 0o7777).toString(8)}); ` +
        'keep the embedded store in a folder of your own (set GLEANER_HOME), or chmod o-w it',
    );
  }
}

/**
 * The password of the store's socket: read from `file`, or made (random, 192 bits) and written
 * there with mode 0600 on first use, so a psql URL the user saved keeps working. A file another
 * user owns or may read is replaced: its password cannot be trusted to be secret. Only the process
 * that holds the store's lock calls this, so no reader depends on the password it replaces.
 */
export function loadOrCreateSocketPassword(file: string): string {
  try {
    return readSocketPassword(file);
  } catch (error) {
    if (!(error instanceof InsecureStoreFileError) && (error as NodeJS.ErrnoException).code !== 'ENOENT')
      throw error;
  }
  rmSync(file, { force: true });
  const password = randomBytes(24).toString('base64url');
  const fd = openSync(file, 'wx', 0o600);
  try {
    writeSync(fd, `${password}\n`);
  } finally {
    closeSync(fd);
  }
  return password;
}

/** Reads the password a running store uses; refuses a file that is not private to this user. */
export function readSocketPassword(file: string): string {
  // O_NOFOLLOW: a symlink planted in place of the file is an error, not a redirect.
  const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const stat = fstatSync(fd);
    const uid = process.getuid?.();
    if (uid !== undefined && stat.uid !== uid)
      throw new InsecureStoreFileError(`${file} belongs to another user (uid ${stat.uid})`);
    if (stat.mode & 0o077)
      throw new InsecureStoreFileError(
        `${file} may be read by other users (mode ${(stat.mode & 0o777).toString(8)}); chmod 600 it`,
      );
    const password = readFileSync(fd, 'utf8').trim();
    if (!password) throw new InsecureStoreFileError(`${file} is empty`);
    return password;
  } finally {
    closeSync(fd);
  }
}

/** `url` with `password` set (the socket's URL as psql and the reading commands need it). */
export function withPassword(url: string, password: string): string {
  const parsed = new URL(url);
  parsed.password = encodeURIComponent(password);
  return parsed.toString();
}

/** `url` without its password: what the lock file records, so the lock holds no secret. */
export function withoutPassword(url: string): string {
  const parsed = new URL(url);
  parsed.password = '';
  return parsed.toString();
}
