/**
 * The front door of the embedded store's socket. pglite-socket 0.2.17 hands a client's
 * StartupMessage straight to PGlite, which answers AuthenticationOk: any local user (or any
 * process a web page can make connect to loopback) could read and change the corpus. So the
 * socket server listens on a Unix socket in a private folder instead, and this door listens on
 * 127.0.0.1: it asks each client for the password with SCRAM-SHA-256, as a Postgres server does,
 * and only then replays the client's StartupMessage to PGlite and joins the two streams.
 *
 * PGlite is one session shared by every client and this process, so a client idle inside a
 * transaction holds everyone else (the crawl's writes wait for it: see PgliteDatabase). Like
 * Postgres's idle_in_transaction_session_timeout, the door ends a client that holds a transaction
 * and sends nothing for `idleInTransactionTimeoutMs`; pglite-socket then rolls its transaction back.
 */
import net from 'node:net';
import {
  authentication,
  CANCEL_REQUEST,
  fatalError,
  GSSENC_REQUEST,
  MessageScanner,
  PROTOCOL_V3,
  SSL_REQUEST,
  startupParameters,
} from './pg-wire';
import { SCRAM_MECHANISM, ScramExchange, type ScramVerifier } from './scram-server';

/** A client has this long to log in; until then it holds a connection and nothing else. */
const LOGIN_TIMEOUT_MS = 10_000;
/** No login message is anywhere near this; a larger one is an attack or garbage. */
const MAX_LOGIN_MESSAGE_BYTES = 16 * 1024;

/**
 * Where the door reports refused logins and sessions it ends: the process logger, handed in by the
 * opener (infra/ sits above db/, so this layer does not import it).
 */
export interface SocketLog {
  warn(fields: Record<string, unknown>, message: string): void;
}

export interface SocketDoorOptions {
  verifier: ScramVerifier;
  /** The Unix socket where pglite-socket serves PGlite, in a folder only this user can enter. */
  upstreamPath: string;
  host: string;
  port: number;
  idleInTransactionTimeoutMs: number;
  log: SocketLog;
  /**
   * Called when the last connected client's session has ended. PGlite is one session shared by every
   * client and the process that opened it, so what a client set (`pg_dump` empties `search_path`)
   * would otherwise outlive it and break the owner's unqualified queries.
   */
  onLastSessionEnded?: () => void;
}

export class LoginRefusedError extends Error {
  override readonly name = 'LoginRefusedError';
  constructor(
    message: string,
    readonly sqlState = '28P01',
  ) {
    super(message);
  }
}

export class SocketDoor {
  private server?: net.Server;
  private readonly clients = new Set<net.Socket>();
  /** Clients admitted to PGlite whose upstream connection is still open. */
  private sessions = 0;

  constructor(private readonly options: SocketDoorOptions) {}

  async start(): Promise<number> {
    const server = net.createServer((client) => {
      // The login is several small messages each way: Nagle's algorithm would hold each ~40 ms.
      client.setNoDelay(true);
      this.clients.add(client);
      client.once('close', () => this.clients.delete(client));
      client.on('error', () => client.destroy());
      void this.admit(client);
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port, this.options.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    return (server.address() as net.AddressInfo).port;
  }

  async stop(): Promise<void> {
    for (const client of this.clients) client.destroy();
    const server = this.server;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async admit(client: net.Socket): Promise<void> {
    const reader = new LoginReader(client);
    const timer = setTimeout(
      () => reader.fail(new LoginRefusedError('login timed out', '08006')),
      LOGIN_TIMEOUT_MS,
    );
    try {
      const startup = await this.login(client, reader);
      clearTimeout(timer);
      this.join(client, startup, reader.rest());
    } catch (error) {
      clearTimeout(timer);
      const refused = error instanceof LoginRefusedError ? error : undefined;
      if (refused && client.writable) client.end(fatalError(refused.sqlState, refused.message));
      else client.destroy();
      this.options.log.warn(
        { clientPort: client.remotePort, reason: (error as Error).message },
        'refused a connection to the embedded store socket',
      );
    }
  }

  /** Runs the login; returns the StartupMessage to replay to PGlite. */
  private async login(client: net.Socket, reader: LoginReader): Promise<Buffer> {
    for (;;) {
      const message = await reader.untyped();
      const code = message.readInt32BE(4);
      // No TLS here (loopback only): 'N' tells the client to go on in the clear, as psql's default does.
      if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
        client.write('N');
        continue;
      }
      if (code === CANCEL_REQUEST) throw new Error('cancel requests are not supported');
      if (code !== PROTOCOL_V3) throw new LoginRefusedError(`unsupported protocol ${code}`, '08P01');
      const user = startupParameters(message.subarray(8)).get('user') ?? '';
      const scram = new ScramExchange(this.options.verifier);
      client.write(authentication(10, Buffer.from(`${SCRAM_MECHANISM}\0\0`)));
      const initial = await reader.typed('p');
      const mechanismEnd = initial.indexOf(0);
      if (mechanismEnd < 0 || initial.toString('utf8', 0, mechanismEnd) !== SCRAM_MECHANISM)
        throw new LoginRefusedError(`password authentication failed for user "${user}"`);
      const clientFirst = initial.subarray(mechanismEnd + 5).toString('utf8');
      client.write(authentication(11, Buffer.from(scram.first(clientFirst))));
      const clientFinal = (await reader.typed('p')).toString('utf8');
      let serverFinal: string;
      try {
        serverFinal = scram.final(clientFinal);
      } catch {
        throw new LoginRefusedError(`password authentication failed for user "${user}"`);
      }
      // PGlite's own answer to the replayed startup begins with AuthenticationOk.
      client.write(authentication(12, Buffer.from(serverFinal)));
      return message;
    }
  }

  /** Connects an admitted client to PGlite and watches its session for idling in a transaction. */
  private join(client: net.Socket, startup: Buffer, early: Buffer): void {
    const upstream = net.connect(this.options.upstreamPath);
    this.sessions += 1;
    upstream.once('close', () => {
      this.sessions -= 1;
      if (this.sessions === 0) this.options.onLastSessionEnded?.();
    });
    const session = new SessionState();
    let idleTimer: NodeJS.Timeout | undefined;
    const rearm = () => {
      clearTimeout(idleTimer);
      idleTimer = undefined;
      if (!session.holdsStore()) return;
      idleTimer = setTimeout(() => {
        this.options.log.warn(
          { clientPort: client.remotePort, idleMs: this.options.idleInTransactionTimeoutMs },
          'ended an embedded store socket session idle in a transaction; its transaction is rolled back',
        );
        client.end(fatalError('25P03', 'terminating connection due to idle-in-transaction timeout'));
        upstream.destroy();
      }, this.options.idleInTransactionTimeoutMs);
      idleTimer.unref();
    };
    const clientScanner = new MessageScanner((type) => session.fromClient(type));
    const upstreamScanner = new MessageScanner((type, first) => session.fromServer(type, first));
    upstream.on('error', () => client.destroy());
    upstream.once('close', () => {
      clearTimeout(idleTimer);
      // After the idle timeout the client is already ending, its FATAL message still to flush.
      if (!client.writableEnded) client.destroy();
    });
    client.once('close', () => {
      clearTimeout(idleTimer);
      upstream.destroy();
    });
    client.on('data', (chunk: Buffer) => {
      clientScanner.push(chunk);
      rearm();
    });
    upstream.on('data', (chunk: Buffer) => {
      upstreamScanner.push(chunk);
      rearm();
    });
    upstream.write(startup);
    if (early.length > 0) {
      clientScanner.push(early);
      upstream.write(early);
    }
    client.pipe(upstream);
    upstream.pipe(client);
    client.resume();
  }
}

/**
 * Whether a client holds the shared session: inside a transaction (ReadyForQuery said T or E),
 * mid extended query (Parse…Execute sent, Sync not yet), or feeding a COPY FROM STDIN, and not
 * waiting on an answer of PGlite's. Only then does its silence keep others out.
 */
class SessionState {
  private status = 'I';
  /** Queries and Syncs sent whose ReadyForQuery has not come back; the startup's counts as one. */
  private awaitingReady = 1;
  private midExtendedQuery = false;
  private copyIn = false;

  holdsStore(): boolean {
    return this.copyIn || (this.awaitingReady === 0 && (this.status !== 'I' || this.midExtendedQuery));
  }

  fromClient(type: string): void {
    if (type === 'Q' || type === 'S') {
      this.awaitingReady++;
      this.midExtendedQuery = false;
    } else if ('PBDECH'.includes(type)) this.midExtendedQuery = true;
    else if (type === 'c' || type === 'f') this.copyIn = false;
  }

  fromServer(type: string, firstBodyByte: number | undefined): void {
    if (type === 'G') this.copyIn = true;
    else if (type === 'Z') {
      this.awaitingReady = Math.max(0, this.awaitingReady - 1);
      this.status = String.fromCharCode(firstBodyByte ?? 73);
      this.copyIn = false;
    }
  }
}

/** Reads whole login messages from a client not yet admitted, pausing the socket between reads. */
class LoginReader {
  private buffer = Buffer.alloc(0);
  private waiting?: { resolve: () => void; reject: (error: Error) => void };
  private failure?: Error;

  constructor(private readonly socket: net.Socket) {
    socket.on('data', this.onData);
    socket.once('close', () => this.fail(new Error('client hung up during login')));
  }

  private readonly onData = (chunk: Buffer) => {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    if (this.buffer.length > MAX_LOGIN_MESSAGE_BYTES + 5)
      this.fail(new LoginRefusedError('login message too large', '08P01'));
    this.waiting?.resolve();
  };

  fail(error: Error): void {
    this.failure ??= error;
    this.waiting?.reject(error);
  }

  /** A StartupMessage or SSL/GSS/Cancel request: length (itself included) then body, no type byte. */
  async untyped(): Promise<Buffer> {
    await this.need(4);
    const length = this.buffer.readInt32BE(0);
    if (length < 8 || length > MAX_LOGIN_MESSAGE_BYTES)
      throw new LoginRefusedError('invalid startup packet length', '08P01');
    await this.need(length);
    return this.take(length);
  }

  /** A typed message's body; anything but `type` ends the login (a client giving up sends 'X'). */
  async typed(type: string): Promise<Buffer> {
    await this.need(5);
    const actual = String.fromCharCode(this.buffer[0] ?? 0);
    const length = this.buffer.readInt32BE(1);
    if (actual !== type)
      throw new LoginRefusedError(`password authentication failed (got message ${actual})`);
    if (length < 4 || length > MAX_LOGIN_MESSAGE_BYTES)
      throw new LoginRefusedError('invalid message length', '08P01');
    await this.need(1 + length);
    return this.take(1 + length).subarray(5);
  }

  /** What the client sent after its login; the reader lets go of the socket, paused. */
  rest(): Buffer {
    this.socket.pause();
    this.socket.off('data', this.onData);
    const rest = this.buffer;
    this.buffer = Buffer.alloc(0);
    return rest;
  }

  private take(bytes: number): Buffer {
    const message = this.buffer.subarray(0, bytes);
    this.buffer = this.buffer.subarray(bytes);
    return message;
  }

  private async need(bytes: number): Promise<void> {
    while (this.buffer.length < bytes) {
      if (this.failure) throw this.failure;
      await new Promise<void>((resolve, reject) => {
        this.waiting = { resolve, reject };
      });
      this.waiting = undefined;
    }
  }
}
