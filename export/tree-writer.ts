/**
 * Writes the export tree incrementally: a file is written only when its bytes differ from what is
 * on disk (so an unchanged corpus leaves every file and its mtime alone), files are replaced by
 * rename so a reader never sees half a file, and files a previous export wrote but this one did not
 * are removed. Only files listed in the previous manifest are ever deleted: a user's own files in
 * the output folder are left alone.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, type WriteStream } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
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

export class TreeWriter {
  readonly counts: WriteCounts = { written: 0, unchanged: 0, removed: 0 };
  private readonly files = new Set<string>();

  constructor(
    readonly root: string,
    private readonly previousFiles: readonly string[],
  ) {}

  /** Files the previous export wrote, from its manifest (none when there is no manifest). */
  static async open(root: string): Promise<TreeWriter> {
    await mkdir(root, { recursive: true });
    let previous: string[] = [];
    try {
      const manifest = JSON.parse(await readFile(path.join(root, MANIFEST_FILE), 'utf8')) as {
        files?: unknown;
      };
      if (Array.isArray(manifest.files)) previous = manifest.files.filter((f) => typeof f === 'string');
    } catch {
      // No manifest (a first export) or an unreadable one: remove nothing.
    }
    return new TreeWriter(root, previous);
  }

  has(file: string): boolean {
    return this.files.has(file);
  }

  absolute(file: string): string {
    const full = path.resolve(this.root, file);
    if (!full.startsWith(path.resolve(this.root) + path.sep))
      throw new Error(`path escapes the export: ${file}`);
    return full;
  }

  /** Writes `file` (relative, POSIX) unless it already holds exactly these bytes. */
  async write(file: string, content: string | Buffer): Promise<void> {
    this.files.add(file);
    const full = this.absolute(file);
    const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
    if (await sameBytes(full, bytes)) {
      this.counts.unchanged += 1;
      return;
    }
    await mkdir(path.dirname(full), { recursive: true });
    const temporary = `${full}.${process.pid}.tmp`;
    await writeFile(temporary, bytes);
    await rename(temporary, full);
    this.counts.written += 1;
  }

  /** Notes a file that is already in place (an asset kept from an earlier export) as part of this one. */
  keep(file: string): void {
    if (!this.files.has(file)) {
      this.files.add(file);
      this.counts.unchanged += 1;
    }
  }

  /** A file written in pieces to a temporary file, moved into place at close only if it changed. */
  async stream(file: string): Promise<StreamedFile> {
    this.files.add(file);
    const full = this.absolute(file);
    await mkdir(path.dirname(full), { recursive: true });
    const temporary = `${full}.${process.pid}.tmp`;
    const out: WriteStream = createWriteStream(temporary);
    const hash = createHash('sha256');
    let size = 0;
    return {
      write: (text: string) =>
        new Promise<void>((resolve, reject) => {
          const bytes = Buffer.from(text, 'utf8');
          hash.update(bytes);
          size += bytes.length;
          if (out.write(bytes)) resolve();
          else {
            out.once('drain', resolve);
            out.once('error', reject);
          }
        }),
      close: async () => {
        await new Promise<void>((resolve, reject) =>
          out.end((error?: Error | null) => (error ? reject(error) : resolve())),
        );
        const digest = hash.digest('hex');
        if ((await fileSize(full)) === size && (await sha256File(full)) === digest) {
          await rm(temporary);
          this.counts.unchanged += 1;
        } else {
          await rename(temporary, full);
          this.counts.written += 1;
        }
      },
    };
  }

  /**
   * Removes the files the previous export wrote and this one did not, then empty folders left
   * behind, and records this export's files in the manifest.
   */
  async finish(): Promise<void> {
    for (const file of this.previousFiles) {
      if (this.files.has(file)) continue;
      let full: string;
      try {
        full = this.absolute(file);
      } catch {
        continue;
      }
      if (!existsSync(full)) continue;
      await rm(full, { force: true });
      this.counts.removed += 1;
      await removeEmptyParents(path.dirname(full), path.resolve(this.root));
    }
    const files = [...this.files].sort(compareCodePoints);
    const manifest = `${JSON.stringify({ generator: 'gleaner export', files }, null, 1)}\n`;
    const full = path.join(this.root, MANIFEST_FILE);
    if (!(await sameBytes(full, Buffer.from(manifest)))) await writeFile(full, manifest);
  }
}

async function fileSize(file: string): Promise<number | undefined> {
  try {
    return (await stat(file)).size;
  } catch {
    return undefined;
  }
}

async function sameBytes(file: string, bytes: Buffer): Promise<boolean> {
  if ((await fileSize(file)) !== bytes.length) return false;
  return (await readFile(file)).equals(bytes);
}

async function sha256File(file: string): Promise<string> {
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
