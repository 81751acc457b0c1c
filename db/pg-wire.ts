/**
 * Just enough of the Postgres wire protocol (v3) for the store's socket door: building the few
 * messages it sends, and following message boundaries in a stream without holding its bodies.
 */

export const PROTOCOL_V3 = 196608;
export const SSL_REQUEST = 80877103;
export const GSSENC_REQUEST = 80877104;
export const CANCEL_REQUEST = 80877102;

function int32(n: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeInt32BE(n);
  return buffer;
}

/** A backend message: type byte, length (itself included), body. */
export function backendMessage(type: string, ...parts: Buffer[]): Buffer {
  const body = Buffer.concat(parts);
  return Buffer.concat([Buffer.from(type), int32(body.length + 4), body]);
}

/** AuthenticationXXX ('R') with its code (10 SASL, 11 SASLContinue, 12 SASLFinal). */
export function authentication(code: number, data: Buffer = Buffer.alloc(0)): Buffer {
  return backendMessage('R', int32(code), data);
}

/** A FATAL ErrorResponse: the client shows `message` and the connection ends. */
export function fatalError(sqlState: string, message: string): Buffer {
  const field = (code: string, value: string) => Buffer.from(`${code}${value}\0`);
  return backendMessage(
    'E',
    field('S', 'FATAL'),
    field('V', 'FATAL'),
    field('C', sqlState),
    field('M', message),
    Buffer.from([0]),
  );
}

/** The key/value pairs of a StartupMessage body (after length and protocol version). */
export function startupParameters(body: Buffer): Map<string, string> {
  const fields = body.toString('utf8').split('\0');
  const parameters = new Map<string, string>();
  for (let i = 0; i + 1 < fields.length && fields[i]; i += 2)
    parameters.set(fields[i] ?? '', fields[i + 1] ?? '');
  return parameters;
}

/**
 * Follows typed messages (type byte + length) across chunks and reports each one's type and the
 * first byte of its body (ReadyForQuery's transaction status), skipping bodies without copying.
 */
export class MessageScanner {
  private readonly header = Buffer.alloc(6);
  private headerBytes = 0;
  private skipBytes = 0;

  constructor(private readonly onMessage: (type: string, firstBodyByte: number | undefined) => void) {}

  push(chunk: Buffer): void {
    let offset = 0;
    while (offset < chunk.length) {
      if (this.skipBytes > 0) {
        const n = Math.min(this.skipBytes, chunk.length - offset);
        this.skipBytes -= n;
        offset += n;
        continue;
      }
      this.header[this.headerBytes++] = chunk[offset++] ?? 0;
      if (this.headerBytes < 5) continue;
      const bodyBytes = this.header.readInt32BE(1) - 4;
      if (bodyBytes > 0 && this.headerBytes < 6) continue;
      const type = String.fromCharCode(this.header[0] ?? 0);
      this.onMessage(type, bodyBytes > 0 ? this.header[5] : undefined);
      this.skipBytes = Math.max(0, bodyBytes - 1);
      this.headerBytes = 0;
    }
  }
}
