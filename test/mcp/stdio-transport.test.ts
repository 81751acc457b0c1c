/**
 * The stdio transport's line handling in process, on streams standing in for stdin and stdout:
 * what a real client's writes can look like (lines split across chunks, CRLF, blank lines) and the
 * lines that must get no reply. mcp-stdio.test.ts drives the same transport through `gleaner mcp`.
 */
import { PassThrough, Writable } from 'node:stream';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { JsonRpcStdioServerTransport } from '../../mcp/stdio-transport';

const PING = { jsonrpc: '2.0', id: 1, method: 'ping' };

function harness() {
  const input = new PassThrough();
  const output = new PassThrough();
  const transport = new JsonRpcStdioServerTransport(input, output);
  const messages: JSONRPCMessage[] = [];
  const errors: Error[] = [];
  let written = '';
  output.setEncoding('utf8').on('data', (chunk: string) => {
    written += chunk;
  });
  transport.onmessage = (message) => messages.push(message);
  transport.onerror = (error) => errors.push(error);
  // Stream events arrive on later ticks: wait for them before looking.
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  const replies = () =>
    written
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { id: unknown; error: { code: number } });
  return { input, transport, messages, errors, settle, replies };
}

let open: JsonRpcStdioServerTransport | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

describe('the stdio transport', () => {
  it('passes on a message split across chunks and ended with CRLF, and skips blank lines', async () => {
    const h = harness();
    open = h.transport;
    await h.transport.start();
    const line = JSON.stringify(PING);
    h.input.write(line.slice(0, 10));
    h.input.write(`${line.slice(10)}\r\n\n  \r\n`);
    await h.settle();
    expect(h.messages).toEqual([PING]);
    expect(h.replies()).toEqual([]);
    expect(h.errors).toEqual([]);
  });

  it('answers a bad request but not a bad response, which could start two peers answering each other', async () => {
    const h = harness();
    open = h.transport;
    await h.transport.start();
    // A peer's own Parse error reply: the SDK refuses its null id.
    h.input.write('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}\n');
    h.input.write('{"jsonrpc":"2.0","id":"a","method":42}\n');
    h.input.write(`${JSON.stringify(PING)}\n`);
    await h.settle();
    expect(h.replies()).toEqual([
      expect.objectContaining({ id: 'a', error: expect.objectContaining({ code: -32600 }) }),
    ]);
    expect(h.messages).toEqual([PING]);
    expect(h.errors).toHaveLength(2);
  });

  it('ends the session on a line longer than the SDK would buffer, as the SDK does', async () => {
    const h = harness();
    open = h.transport;
    let closed = false;
    h.transport.onclose = () => {
      closed = true;
    };
    await h.transport.start();
    h.input.write(Buffer.alloc(10 * 1024 * 1024 + 1, 0x20));
    await h.settle();
    expect(closed).toBe(true);
    expect(h.errors.map((error) => error.message)).toEqual([expect.stringContaining('longer than')]);
    h.input.write(`${JSON.stringify(PING)}\n`);
    await h.settle();
    expect(h.messages).toEqual([]);
  });

  it('ends the session, without crashing, when the client has closed its end of stdout', async () => {
    const input = new PassThrough();
    // A pipe whose reader is gone: every write fails with EPIPE, emitted as the stream's 'error'.
    const brokenPipe = new Writable({
      write(_chunk, _encoding, done) {
        done(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
      },
    });
    const transport = new JsonRpcStdioServerTransport(input, brokenPipe);
    open = transport;
    const errors: Error[] = [];
    let closes = 0;
    transport.onerror = (error) => errors.push(error);
    transport.onclose = () => {
      closes++;
    };
    await transport.start();
    void transport.send({ jsonrpc: '2.0', id: 1, result: {} });
    await new Promise((resolve) => setImmediate(resolve));
    expect(closes).toBe(1);
    expect(errors.map((error) => (error as NodeJS.ErrnoException).code)).toEqual(['EPIPE']);
    // A reply still in flight when the session ended fails the same way, quietly.
    void transport.send({ jsonrpc: '2.0', id: 2, result: {} });
    await new Promise((resolve) => setImmediate(resolve));
    expect(closes).toBe(1);
  });
});
