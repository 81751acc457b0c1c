/**
 * The MCP SDK's stdio transport, plus the replies JSON-RPC 2.0 requires for lines it cannot take.
 * The SDK hands a line that is not JSON, or not a JSON-RPC message, to `onerror` and answers
 * nothing, so a client waits forever on a request it garbled. Here each line is checked on its way
 * in: a good one goes on to the SDK unchanged, a bad one is answered with -32700 or -32600, and a
 * request whose params do not fit its method with -32602 (json-rpc-errors.ts); the session reads on.
 *
 * The check sits in front of the SDK, in the stream it reads, because the SDK's reader is private
 * and its `onerror` gets the parse error without the line, so neither the id nor the kind of
 * failure could be told from there. Good lines are parsed twice (here and by the SDK): MCP
 * messages are small, and it keeps the SDK's transport as it is.
 */
import { type Readable, Transform, type TransformCallback, type Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from '@modelcontextprotocol/sdk/shared/stdio.js';
import {
  invalidParamsReply,
  invalidRequestReply,
  type JsonRpcErrorReply,
  looksLikeResponse,
  parseErrorReply,
} from './json-rpc-errors';

const NEWLINE = 0x0a;

export class JsonRpcStdioServerTransport extends StdioServerTransport {
  private readonly input: Readable;
  private readonly output: Writable;
  private readonly lines: JsonRpcLines;
  private closing = false;
  private readonly onInputError = (error: Error) => this.onerror?.(error);
  /**
   * The client closed its end of our stdout (EPIPE): nothing can reach it any more, so the session
   * ends, as when it closes our stdin. Unheard, the error crashed `gleaner mcp` with a stack trace.
   * Never taken off: a reply still in flight when the session ends fails the same way.
   */
  private readonly onOutputError = (error: Error) => {
    this.onerror?.(error);
    this.close().catch(() => {});
  };

  constructor(input: Readable = process.stdin, output: Writable = process.stdout) {
    const lines = new JsonRpcLines(STDIO_DEFAULT_MAX_BUFFER_SIZE - 1);
    // The SDK reads whole lines only, one per chunk, so its own limit can never be the one hit.
    super(lines, output);
    this.input = input;
    this.output = output;
    this.lines = lines;
    lines.onRefused = (error, reply) => {
      // Written to the output directly, in order with the SDK's own writes to it: send() takes only
      // the SDK's message type, which has no null id.
      if (reply) output.write(`${JSON.stringify(reply)}\n`);
      this.onerror?.(error);
    };
    lines.onOverflow = (error) => {
      // What the SDK does when its buffer overflows: report, and end the session.
      this.onerror?.(error);
      this.close().catch(() => {});
    };
  }

  override async start(): Promise<void> {
    await super.start();
    // pipe() carries data and end, not errors.
    this.input.on('error', this.onInputError);
    this.output.on('error', this.onOutputError);
    this.input.pipe(this.lines);
  }

  override async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    this.input.unpipe(this.lines);
    this.input.off('error', this.onInputError);
    // As the SDK leaves stdin: paused unless someone else reads it, so the process can exit.
    if (this.input.listenerCount('data') === 0) this.input.pause();
    await super.close();
  }
}

/** Splits the input into lines, passes on JSON-RPC messages and hands every other line to `onRefused`. */
class JsonRpcLines extends Transform {
  onRefused: (error: Error, reply?: JsonRpcErrorReply) => void = () => {};
  onOverflow: (error: Error) => void = () => {};
  private partial: Buffer[] = [];
  private partialBytes = 0;

  constructor(private readonly maxLineBytes: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      const line = this.partialBytes
        ? Buffer.concat([...this.partial, chunk.subarray(start, end)])
        : chunk.subarray(start, end);
      this.partial = [];
      this.partialBytes = 0;
      start = end + 1;
      if (line.length > this.maxLineBytes) {
        this.overflow();
        done();
        return;
      }
      this.check(line);
    }
    if (start < chunk.length) {
      this.partial.push(chunk.subarray(start));
      this.partialBytes += chunk.length - start;
      if (this.partialBytes > this.maxLineBytes) this.overflow();
    }
    done();
  }

  private check(line: Buffer): void {
    const text = line.toString('utf8').replace(/\r$/, '');
    // A blank line carries no message: skipped, as a reader of newline-delimited JSON would.
    if (text.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      this.onRefused(new SyntaxError(`a line on stdin is not JSON: ${detail}`), parseErrorReply(detail));
      return;
    }
    const reply = invalidRequestReply(value);
    if (reply) {
      const error = new Error('a line on stdin is JSON but not a JSON-RPC 2.0 message');
      this.onRefused(error, looksLikeResponse(value) ? undefined : reply);
      return;
    }
    const badParams = invalidParamsReply(value);
    if (badParams) {
      this.onRefused(new Error(`a request on stdin has bad params: ${badParams.error.message}`), badParams);
      return;
    }
    this.push(Buffer.concat([line, Buffer.from('\n')]));
  }

  private overflow(): void {
    this.partial = [];
    this.partialBytes = 0;
    this.onOverflow(new Error(`a line on stdin is longer than ${this.maxLineBytes} bytes`));
  }
}
