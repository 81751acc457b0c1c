/**
 * Reads a response body under three limits: total time, bytes on the wire and decompressed bytes
 * (so a small gzip bomb is cut as soon as its output passes the cap). The decompressed cap holds for
 * every layer of a content-coding chain, not only the last, and a chain longer than
 * `MAX_CONTENT_CODINGS` is refused before any byte is read. Stops at the first limit and destroys the
 * source stream, which makes undici drop the connection.
 */
import { type Readable, Transform, type TransformCallback, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { BodyTooLargeError, ContentCodingError, FetchTimeoutError } from './errors.ts';

/** Byte counts, updated while reading, so they are known even when reading fails. */
export interface BodyProgress {
  wireBytes: number;
  bytes: number;
  /** Set when reading stopped at the cap and the body was kept cut (`truncate`). */
  truncated?: boolean;
}

export interface ReadBodyOptions {
  readonly maxBodyBytes: number;
  readonly bodyTimeoutMs: number;
  /** Content codings in the order the server applied them (as listed in Content-Encoding). */
  readonly encodings: readonly string[];
  readonly signal?: AbortSignal;
  /** Keep the first `maxBodyBytes` decoded bytes instead of failing with `BodyTooLargeError`. */
  readonly truncate?: boolean;
}

/** Stops the pipeline once a truncated body is complete; never leaves readBody. */
class BodyCut extends Error {}

const SUPPORTED_ENCODINGS = new Set(['gzip', 'x-gzip', 'deflate', 'br']);

/**
 * Content codings decoded for one body. Each layer is a zlib stream working in libuv's threadpool
 * (shared with DNS and file I/O), so a `gzip, gzip, ...` chain of thousands would queue thousands of
 * jobs per chunk; curl caps the chain at 5 (CVE-2022-32206). No real server compresses twice.
 */
export const MAX_CONTENT_CODINGS = 2;

/** Content-Encoding → list of codings, `identity` dropped, lower case. */
export function parseContentEncoding(header: string | undefined): string[] {
  if (header === undefined) return [];
  return header
    .split(',')
    .map((e) => e.trim().toLowerCase())
    .filter((e) => e !== '' && e !== 'identity');
}

/**
 * Why the codings cannot be decoded, if they cannot: a chain longer than `MAX_CONTENT_CODINGS`
 * (`chain of 3000 codings (at most 2)`), or the first coding we do not know.
 */
export function unsupportedEncoding(encodings: readonly string[]): string | undefined {
  if (encodings.length > MAX_CONTENT_CODINGS) return codingChainProblem(encodings.length);
  return encodings.find((e) => !SUPPORTED_ENCODINGS.has(e));
}

function codingChainProblem(count: number): string {
  return `chain of ${count} codings (at most ${MAX_CONTENT_CODINGS})`;
}

function createDecoder(encoding: string): Transform {
  const flush = { flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH };
  if (encoding === 'br') {
    const brFlush = zlib.constants.BROTLI_OPERATION_FLUSH;
    return zlib.createBrotliDecompress({ flush: brFlush, finishFlush: brFlush });
  }
  if (encoding === 'deflate') return new InflateAuto(flush);
  return zlib.createGunzip(flush);
}

/**
 * `deflate` should be zlib-wrapped (RFC 9110), but some servers send raw deflate. Like undici's fetch we
 * pick by the first byte; unlike it we respect backpressure so a bomb cannot flood memory.
 */
class InflateAuto extends Transform {
  private inner: zlib.Inflate | zlib.InflateRaw | undefined;

  constructor(private readonly zlibOptions: zlib.ZlibOptions) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (this.inner === undefined) {
      if (chunk.length === 0) {
        callback();
        return;
      }
      const first = chunk[0] ?? 0;
      const inner =
        (first & 0x0f) === 0x08
          ? zlib.createInflate(this.zlibOptions)
          : zlib.createInflateRaw(this.zlibOptions);
      inner.on('data', (data: Buffer) => {
        if (!this.push(data)) inner.pause();
      });
      inner.on('error', (err) => this.destroy(err));
      this.inner = inner;
    }
    this.inner.write(chunk, callback);
  }

  override _read(size: number): void {
    this.inner?.resume();
    super._read(size);
  }

  override _flush(callback: TransformCallback): void {
    if (this.inner === undefined) {
      callback();
      return;
    }
    this.inner.once('end', () => callback());
    this.inner.end();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.inner?.destroy();
    callback(error);
  }
}

/**
 * Reads the whole body within the limits and returns the decoded (decompressed) bytes. Rejects with
 * `BodyTooLargeError`, `FetchTimeoutError('body')`, the signal's reason on abort, a stream/zlib error,
 * or `ContentCodingError` (without reading) for a chain longer than `MAX_CONTENT_CODINGS`.
 */
export async function readBody(
  source: Readable,
  options: ReadBodyOptions,
  progress: BodyProgress,
): Promise<Buffer> {
  const { maxBodyBytes, bodyTimeoutMs, signal } = options;
  signal?.throwIfAborted();
  if (options.encodings.length > MAX_CONTENT_CODINGS) {
    source.destroy();
    throw new ContentCodingError(codingChainProblem(options.encodings.length));
  }
  let failure: unknown;
  // A timeout or abort settles readBody at once: tearing the pipeline down waits for every decoder's
  // job already queued in the threadpool, which is not the caller's time to spend.
  let stopNow: (err: unknown) => void = () => {};
  const stopped = new Promise<never>((_resolve, reject) => {
    stopNow = reject;
  });
  stopped.catch(() => {});
  const fail = (err: unknown) => {
    failure ??= err;
    stopNow(failure);
    source.destroy(err instanceof Error ? err : new Error(String(err)));
  };
  const timer = setTimeout(() => fail(new FetchTimeoutError('body', bodyTimeoutMs)), bodyTimeoutMs);
  const onAbort = () => fail(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });

  const chunks: Buffer[] = [];
  const overCap = () => (options.truncate ? new BodyCut() : new BodyTooLargeError(maxBodyBytes));
  // Every stage but the sink counts what passes it: the wire, then each decoder's output but the
  // last. An inner layer can expand to gigabytes the next one swallows (a gzip header's comment field
  // is unbounded), so each layer is held to the cap, not only the bytes that reach the sink.
  const countBytes = (count: (bytes: number) => number) =>
    new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        const total = count(chunk.length);
        // Truncating, these caps only bound the work; the decoded bytes are cut in the sink.
        if (total > maxBodyBytes && !options.truncate) callback(overCap());
        else if (total > 2 * maxBodyBytes) callback(overCap());
        else callback(null, chunk);
      },
    });
  const wireCounter = countBytes((n) => {
    progress.wireBytes += n;
    return progress.wireBytes;
  });
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      const room = maxBodyBytes - progress.bytes;
      if (chunk.length > room) {
        if (options.truncate && room > 0) {
          chunks.push(chunk.subarray(0, room));
          progress.bytes += room;
        } else if (!options.truncate) progress.bytes += chunk.length;
        callback(overCap());
        return;
      }
      progress.bytes += chunk.length;
      chunks.push(chunk);
      callback();
    },
  });
  // Decoders run in reverse order of application: `Content-Encoding: gzip, br` is undone br first.
  const decoders = [...options.encodings].reverse().flatMap((encoding, index): Transform[] => {
    if (index === options.encodings.length - 1) return [createDecoder(encoding)];
    let layerBytes = 0;
    const layerCounter = countBytes((n) => {
      layerBytes += n;
      return layerBytes;
    });
    return [createDecoder(encoding), layerCounter];
  });
  try {
    const piped = pipeline([source, wireCounter, ...decoders, sink]);
    piped.catch(() => {});
    await Promise.race([piped, stopped]);
  } catch (err) {
    if (failure === undefined && err instanceof BodyCut) {
      progress.truncated = true;
      return Buffer.concat(chunks);
    }
    throw failure ?? err;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
  if (failure !== undefined) throw failure;
  return Buffer.concat(chunks);
}
