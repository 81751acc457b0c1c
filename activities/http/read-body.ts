/**
 * Reads a response body under three limits: total time, bytes on the wire and decompressed bytes
 * (so a small gzip bomb is cut as soon as its output passes the cap). Stops at the first limit and
 * destroys the source stream, which makes undici drop the connection.
 */
import { type Readable, Transform, type TransformCallback, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { BodyTooLargeError, FetchTimeoutError } from './errors.ts';

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

/** Content-Encoding → list of codings, `identity` dropped, lower case. */
export function parseContentEncoding(header: string | undefined): string[] {
  if (header === undefined) return [];
  return header
    .split(',')
    .map((e) => e.trim().toLowerCase())
    .filter((e) => e !== '' && e !== 'identity');
}

/** The first coding we cannot decode, if any. */
export function unsupportedEncoding(encodings: readonly string[]): string | undefined {
  return encodings.find((e) => !SUPPORTED_ENCODINGS.has(e));
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
 * `BodyTooLargeError`, `FetchTimeoutError('body')`, the signal's reason on abort, or a stream/zlib error.
 */
export async function readBody(
  source: Readable,
  options: ReadBodyOptions,
  progress: BodyProgress,
): Promise<Buffer> {
  const { maxBodyBytes, bodyTimeoutMs, signal } = options;
  signal?.throwIfAborted();
  let failure: unknown;
  const fail = (err: unknown) => {
    failure ??= err;
    source.destroy(err instanceof Error ? err : new Error(String(err)));
  };
  const timer = setTimeout(() => fail(new FetchTimeoutError('body', bodyTimeoutMs)), bodyTimeoutMs);
  const onAbort = () => fail(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });

  const chunks: Buffer[] = [];
  const overCap = () => (options.truncate ? new BodyCut() : new BodyTooLargeError(maxBodyBytes));
  const wireCounter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      progress.wireBytes += chunk.length;
      // Truncating, the wire cap only bounds reading; the decoded bytes are cut in the sink.
      if (progress.wireBytes > maxBodyBytes && !options.truncate) callback(overCap());
      else if (progress.wireBytes > 2 * maxBodyBytes) callback(overCap());
      else callback(null, chunk);
    },
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
  const decoders = [...options.encodings].reverse().map(createDecoder);
  try {
    await pipeline([source, wireCounter, ...decoders, sink]);
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
