/**
 * Writes the export tree incrementally: a file is written only when its bytes differ from what is
 * on disk (so an unchanged corpus leaves every file and its mtime alone), files are replaced by
 * rename so a reader never sees half a file, and files a previous export wrote but this one did not
 * are removed. Only files listed in the previous manifest are ever deleted: a user's own files in
 * the output folder are left alone.
 *
 * Nothing is written, read back or deleted through a symbolic link inside the output folder: a link
 * planted there (by another local user, or left by a tool) could otherwise point a page's file, or
 * a manifest-driven deletion, at any file the exporting user may write. Every component below the
 * root is checked with lstat before each write and each deletion, temporary files are opened with
 * O_NOFOLLOW | O_EXCL, and rename replaces a link at the final name instead of following it. The
 * output folder itself may be a link: that is the user's choice, resolved once when it is opened.
 */
import { createHash } from 'node:crypto';
import { constants, createReadStream } from 'node:fs';
import {
  type FileHandle,
  lstat,
  open,
  readdir,
  readFile,
  realpath,
  rename,
  rm,
  rmdir,
  unlink,
} from 'node:fs/promises';
import path from 'node:path';
import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { makeFolders } from '../infra/make-folders';
import { compareCodePoints } from './tree-paths';

export const MANIFEST_FILE = '.gleaner-export.json';

export interface WriteCounts {
  written: number;
  unchanged: number;
  removed: number;
}

/** A file written piece by piece (llms-full.txt, chunks.jsonl): compared with the old one at the end. */
export interface StreamedFile {
  write(text: string): Promise<void>;
  close(): Promise<void>;
}

/** A path inside the output folder that the export refuses to write or delete. */
export class UnsafeExportPathError extends Error {
  override readonly name: string = 'UnsafeExportPathError';
  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super(`${file}: ${reason}`);
  }
}

/**
 * A file stands where a folder is needed, or a folder where a file is: usually a file of the
 * previous export, from before a page was renamed (`/a` → `a.md` before `/a.md/x` appeared).
 */
export class ExportPathClashError extends UnsafeExportPathError {
  override readonly name = 'ExportPathClashError';
  constructor(
    file: string,
    reason: string,
    /** The component in the way, relative to the root (POSIX). */
    readonly component: string,
  ) {
    super(file, reason);
  }
}

/** A file of the previous export left in place, with why. */
export interface RefusedRemoval {
  file: string;
  reason: string;
}

const TEMPORARY_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

export class TreeWriter {
  readonly counts: WriteCounts = { written: 0, unchanged: 0, removed: 0 };
  /** Files of the previous export this one would have removed but did not (a link on the way). */
  readonly refusedRemovals: RefusedRemoval[] = [];
  private readonly files = new Set<string>();
  private readonly removedOrRefused = new Set<string>();
  private readonly previousFiles: ReadonlySet<string>;
  private temporaries = 0;

  constructor(
    readonly root: string,
    previousFiles: readonly string[],
  ) {
    this.previousFiles = new Set(previousFiles);
  }

  /** Files the previous export wrote, from its manifest (none when there is no manifest). */
  static async open(root: string): Promise<TreeWriter> {
    await makeFolders(root);
    const real = await realpath(root);
    const writer = new TreeWriter(real, []);
    let previous: string[] = [];
    try {
      const manifest = JSON.parse((await writer.readOwn(MANIFEST_FILE)).toString('utf8')) as {
        files?: unknown;
      };
      if (Array.isArray(manifest.files)) previous = manifest.files.filter((f) => typeof f === 'string');
    } catch {
      // No manifest (a first export), an unreadable one or a link in its place: remove nothing.
    }
    return new TreeWriter(real, previous);
  }

  has(file: string): boolean {
    return this.files.has(file);
  }

  absolute(file: string): string {
    const full = path.resolve(this.root, file);
    if (!full.startsWith(this.root + path.sep)) throw new UnsafeExportPathError(file, 'escapes the export');
    return full;
  }

  /**
   * The absolute path of `file`, after checking that no component below the root that exists is a
   * symbolic link, and that every existing parent is a folder. The final component may be missing.
   */
  async checked(file: string): Promise<string> {
    const full = this.absolute(file);
    const parts = path.relative(this.root, full).split(path.sep);
    let current = this.root;
    for (const [index, part] of parts.entries()) {
      current = path.join(current, part);
      const stats = await lstat(current).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return undefined;
        throw error;
      });
      if (stats === undefined) return full;
      const shown = path.relative(this.root, current);
      if (stats.isSymbolicLink())
        throw new UnsafeExportPathError(
          file,
          `${shown} is a symbolic link; the export does not write through links`,
        );
      const last = index === parts.length - 1;
      const component = shown.split(path.sep).join('/');
      if (!last && !stats.isDirectory())
        throw new ExportPathClashError(file, `${shown} is not a folder`, component);
      if (last && !stats.isFile())
        throw new ExportPathClashError(file, `${shown} is not a regular file`, component);
    }
    return full;
  }

  /**
   * `checked`, except that stale files of the previous export standing in the way are removed first:
   * they would go at the end of this export anyway, and a page renamed since must not fail for them.
   */
  private async checkedForWrite(file: string): Promise<string> {
    try {
      return await this.checked(file);
    } catch (error) {
      if (!(error instanceof ExportPathClashError)) throw error;
      const under = `${error.component}/`;
      for (const stale of this.previousFiles) {
        if (stale === error.component || stale.startsWith(under)) await this.removeStaleFile(stale);
      }
      return this.checked(file);
    }
  }

  /** The bytes of a file the export itself keeps (manifest, asset index), never through a link. */
  async readOwn(file: string): Promise<Buffer> {
    return readFile(await this.checked(file));
  }

  /**
   * Creates `temporary` and fills it by `fill`; a failure (a source that cannot be read, a full disk)
   * removes it again, so an export that fails leaves no half-written file beside the tree.
   */
  private async filled(temporary: string, fill: (handle: FileHandle) => Promise<unknown>): Promise<void> {
    const handle = await open(temporary, TEMPORARY_FLAGS, 0o644);
    try {
      await fill(handle);
    } catch (error) {
      await handle.close().catch(() => {});
      await unlink(temporary).catch(() => {});
      throw error;
    }
    // A stream over the handle may have closed it already; closing again is a no-op.
    await handle.close();
  }

  /** Writes `file` (relative, POSIX) unless it already holds exactly these bytes. */
  async write(file: string, content: string | Buffer): Promise<void> {
    const full = await this.checkedForWrite(file);
    const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
    if (await sameBytes(full, bytes)) {
      this.files.add(file);
      this.counts.unchanged += 1;
      return;
    }
    await this.makeParents(file, full);
    const temporary = this.temporaryFor(full);
    await this.filled(temporary, async (handle) => handle.writeFile(bytes));
    await this.moveIntoPlace(file, temporary, full);
    this.files.add(file);
    this.counts.written += 1;
  }

  /** Writes `file` with the bytes of `source` (absolute), streamed, unless it already holds them. */
  async copy(file: string, source: string): Promise<void> {
    const full = await this.checkedForWrite(file);
    const sourceStats = await lstat(source);
    if (!sourceStats.isFile()) throw new UnsafeExportPathError(file, 'its source is not a regular file');
    if (
      (await fileSize(full)) === sourceStats.size &&
      (await sha256File(full)) === (await sha256File(source))
    ) {
      this.files.add(file);
      this.counts.unchanged += 1;
      return;
    }
    await this.makeParents(file, full);
    const temporary = this.temporaryFor(full);
    await this.filled(temporary, (handle) => pipeline(createReadStream(source), handle.createWriteStream()));
    await this.moveIntoPlace(file, temporary, full);
    this.files.add(file);
    this.counts.written += 1;
  }

  /** Notes a file that is already in place (an asset kept from an earlier export) as part of this one. */
  keep(file: string): void {
    if (!this.files.has(file)) {
      this.files.add(file);
      this.counts.unchanged += 1;
    }
  }

  /**
   * Keeps a file of the previous export that this one could not rewrite (its page failed): the last
   * good copy stays, still listed in the manifest, instead of being removed for a passing error.
   */
  retain(file: string): void {
    if (this.previousFiles.has(file)) this.files.add(file);
  }

  /** A file written in pieces to a temporary file, moved into place at close only if it changed. */
  async stream(file: string): Promise<StreamedFile> {
    const full = await this.checkedForWrite(file);
    await this.makeParents(file, full);
    const temporary = this.temporaryFor(full);
    const handle = await open(temporary, TEMPORARY_FLAGS, 0o644);
    const out = pacedWrites(handle.createWriteStream());
    const hash = createHash('sha256');
    let size = 0;
    return {
      write: (text: string) => {
        const bytes = Buffer.from(text, 'utf8');
        hash.update(bytes);
        size += bytes.length;
        return out.write(bytes);
      },
      close: async () => {
        try {
          await out.end();
        } catch (error) {
          await unlink(temporary).catch(() => {});
          throw error;
        }
        const digest = hash.digest('hex');
        await this.checked(file);
        if ((await fileSize(full)) === size && (await sha256File(full)) === digest) {
          await rm(temporary);
          this.files.add(file);
          this.counts.unchanged += 1;
        } else {
          await this.moveIntoPlace(file, temporary, full);
          this.files.add(file);
          this.counts.written += 1;
        }
      },
    };
  }

  /**
   * Removes the files the previous export wrote and this one did not (nor will: `stillToWrite`),
   * then empty folders left behind. A file is removed only when it is a regular file reached
   * without a link, inside the output folder once every link is resolved; anything else stays and
   * is listed in `refusedRemovals`.
   */
  async removeStale(stillToWrite: readonly string[] = []): Promise<void> {
    for (const file of this.previousFiles) {
      if (!stillToWrite.includes(file)) await this.removeStaleFile(file);
    }
  }

  private async removeStaleFile(file: string): Promise<void> {
    if (this.files.has(file) || this.removedOrRefused.has(file)) return;
    let full: string;
    try {
      full = await this.checked(file);
      if ((await fileSize(full)) === undefined) return;
      const parent = await realpath(path.dirname(full));
      if (!(parent + path.sep).startsWith(this.root + path.sep))
        throw new UnsafeExportPathError(file, 'lies outside the export');
    } catch (error) {
      if (error instanceof UnsafeExportPathError) {
        this.removedOrRefused.add(file);
        this.refusedRemovals.push({ file, reason: error.reason });
        return;
      }
      throw error;
    }
    this.removedOrRefused.add(file);
    await unlink(full);
    this.counts.removed += 1;
    await removeEmptyParents(path.dirname(full), this.root);
  }

  /** Records this export's files in the manifest, which the next export removes stale files by. */
  async finish(): Promise<void> {
    const files = [...this.files].sort(compareCodePoints);
    const manifest = `${JSON.stringify({ generator: 'gleaner export', files }, null, 1)}\n`;
    const before = { ...this.counts };
    await this.write(MANIFEST_FILE, manifest);
    // The manifest is bookkeeping, not part of the export's file counts.
    Object.assign(this.counts, before);
  }

  private temporaryFor(full: string): string {
    // A short name of its own, not `<name>.tmp`: a name near the file system's limit must still fit.
    this.temporaries += 1;
    return path.join(path.dirname(full), `.gleaner-${process.pid}-${this.temporaries}.tmp`);
  }

  private async makeParents(file: string, full: string): Promise<void> {
    await makeFolders(path.dirname(full));
    // mkdir follows links; check again now that the folders exist.
    await this.checked(file);
  }

  /** rename replaces a link at `full` rather than following it; the path is checked once more. */
  private async moveIntoPlace(file: string, temporary: string, full: string): Promise<void> {
    try {
      await this.checked(file);
      await rename(temporary, full);
    } catch (error) {
      await unlink(temporary).catch(() => {});
      throw error;
    }
  }
}

/** Writes to a stream in turn, each write waiting for `drain` when the stream's buffer is full. */
export interface PacedWrites {
  write(bytes: Buffer): Promise<void>;
  /** Ends the stream; rejects with the stream's error if it had one. */
  end(): Promise<void>;
}

/**
 * One `error` listener for the stream's whole life: a listener added per full buffer and left
 * behind once `drain` came piled up past Node's limit of ten (MaxListenersExceededWarning on every
 * large export). An error with no write waiting is kept and fails the next write or the end, and
 * the listener being there keeps it from crashing the process meanwhile.
 */
export function pacedWrites(out: Writable): PacedWrites {
  let failure: Error | undefined;
  const waiting: { resolve: () => void; reject: (error: Error) => void }[] = [];
  out.on('error', (error) => {
    failure ??= error;
    for (const waiter of waiting.splice(0)) waiter.reject(error);
  });
  out.on('drain', () => {
    for (const waiter of waiting.splice(0)) waiter.resolve();
  });
  return {
    write: (bytes) =>
      new Promise<void>((resolve, reject) => {
        // A destroyed stream never drains: a write after its error would wait forever.
        const error = failure ?? out.errored;
        if (error) reject(error);
        else if (out.write(bytes)) resolve();
        else waiting.push({ resolve, reject });
      }),
    end: () =>
      new Promise<void>((resolve, reject) => {
        const error = failure ?? out.errored;
        if (error) reject(error);
        else out.end((endError?: Error | null) => (endError ? reject(endError) : resolve()));
      }),
  };
}

async function fileSize(file: string): Promise<number | undefined> {
  try {
    const stats = await lstat(file);
    return stats.isFile() ? stats.size : undefined;
  } catch {
    return undefined;
  }
}

async function sameBytes(file: string, bytes: Buffer): Promise<boolean> {
  if ((await fileSize(file)) !== bytes.length) return false;
  return (await readFile(file)).equals(bytes);
}

export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

async function removeEmptyParents(dir: string, root: string): Promise<void> {
  let current = dir;
  while (current.startsWith(root + path.sep)) {
    const entries = await readdir(current).catch(() => ['?']);
    if (entries.length > 0) return;
    await rmdir(current).catch(() => {});
    current = path.dirname(current);
  }
}
