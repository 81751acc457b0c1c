/**
 * Client connections to Temporal, with a failure that says why. Over TLS the client SDK (grpc-js)
 * reports any handshake failure, a refused client certificate included, only as "Failed to connect
 * before the deadline" after 10 s; so on a failure over TLS one handshake of our own, with the same
 * certificates, finds out what the server or our check objected to.
 */
import { isIP } from 'node:net';
import tls from 'node:tls';
import { Connection, type ConnectionOptions, type TLSConfig } from '@temporalio/client';
import { RuntimeError } from './gleaner-home';
import type { TemporalConnectionOptions } from './temporal-connection-options';

/** How long after our handshake a TLS 1.3 server has to send its verdict on our certificate. */
const VERDICT_WAIT_MS = 1_000;
const PROBE_TIMEOUT_MS = 5_000;

/**
 * `Connection.connect` to `address` with `options` (TLS, API key) and `extra`.
 * @throws RuntimeError naming the address and, over TLS, what the handshake objected to
 */
export async function connectTemporal(
  address: string,
  options: TemporalConnectionOptions,
  extra: Omit<ConnectionOptions, 'address' | 'tls' | 'apiKey'> = {},
): Promise<Connection> {
  try {
    return await Connection.connect({ ...extra, address, ...options });
  } catch (error) {
    const viaTls = options.tls ? ' over TLS' : '';
    const why = (options.tls && (await tlsHandshakeFailure(address, options.tls))) || messageChain(error);
    throw new RuntimeError(`cannot reach Temporal at ${address}${viaTls}: ${why}`, { cause: error });
  }
}

/**
 * The SDK's message with its causes': its own says only "Failed to connect to Temporal server" when
 * the server answered its first call with an error, such as UNAUTHENTICATED for a wrong API key.
 */
function messageChain(error: unknown): string {
  const messages: string[] = [];
  for (let cause = error; cause instanceof Error && messages.length < 3; cause = cause.cause)
    messages.push(cause.message.split('\n')[0] ?? '');
  return messages.join(': ');
}

/** What went wrong in a TLS handshake with `address` as configured; undefined when nothing did. */
async function tlsHandshakeFailure(address: string, config: TLSConfig): Promise<string | undefined> {
  const { host, port } = splitAddress(address);
  const serverName = config.serverNameOverride ?? (isIP(host) ? undefined : host);
  const failure = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
    const socket = tls.connect({
      host,
      port,
      ...(serverName ? { servername: serverName } : {}),
      ...(config.serverRootCACertificate ? { ca: Buffer.from(config.serverRootCACertificate) } : {}),
      ...(config.clientCertPair
        ? { cert: Buffer.from(config.clientCertPair.crt), key: Buffer.from(config.clientCertPair.key) }
        : {}),
      ALPNProtocols: ['h2'],
      // The SDK checks the certificate against the override when there is one, else the address's host.
      checkServerIdentity: (_host, cert) => tls.checkServerIdentity(serverName ?? host, cert),
    });
    const done = (error?: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(error);
    };
    const timer = setTimeout(() => done(), PROBE_TIMEOUT_MS);
    socket.once('error', done);
    // TLS 1.3 ends the client's handshake before the server has judged the client's certificate.
    socket.once('secureConnect', () => {
      clearTimeout(timer);
      setTimeout(() => done(), VERDICT_WAIT_MS);
    });
  });
  if (!failure) return undefined;
  return describeTlsFailure(failure, config, serverName ?? host);
}

function describeTlsFailure(
  error: NodeJS.ErrnoException,
  config: TLSConfig,
  name: string,
): string | undefined {
  const code = error.code ?? '';
  const detail = `(${code || error.message})`;
  if (['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT'].includes(code))
    return undefined;
  if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code === 'ERR_SSL_PACKET_LENGTH_TOO_LONG')
    return `the server does not speak TLS; unset TEMPORAL_TLS and the TEMPORAL_TLS_* variables ${detail}`;
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID')
    return `the server's certificate is not for ${name}; set TEMPORAL_TLS_SERVER_NAME to a name it holds ${detail}`;
  if (
    [
      'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
      'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
      'UNABLE_TO_GET_ISSUER_CERT',
      'SELF_SIGNED_CERT_IN_CHAIN',
      'DEPTH_ZERO_SELF_SIGNED_CERT',
    ].includes(code)
  ) {
    return config.serverRootCACertificate
      ? `the server's certificate is not signed by the CA in TEMPORAL_TLS_SERVER_CA_CERT_PATH/_DATA ${detail}`
      : `the server's certificate is not signed by a CA this system trusts; set TEMPORAL_TLS_SERVER_CA_CERT_PATH to its CA ${detail}`;
  }
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID')
    return `the server's certificate is outside its validity period ${detail}`;
  if (
    code.startsWith('ERR_SSL_') &&
    /ALERT_(CERTIFICATE_REQUIRED|HANDSHAKE_FAILURE)$/.test(code) &&
    !config.clientCertPair
  )
    return `the server requires a client certificate; set TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH ${detail}`;
  if (code.startsWith('ERR_SSL_') && code.includes('_ALERT_') && config.clientCertPair)
    return `the server refused the client certificate in TEMPORAL_TLS_CLIENT_CERT_PATH/_DATA ${detail}`;
  return `the TLS handshake failed: ${error.message.replace(/\s+/g, ' ').trim()}`;
}

/** `host:port`, `[v6]:port` or a bare host, whose port the SDK takes to be 7233. */
function splitAddress(address: string): { host: string; port: number } {
  const match = /^\[([^\]]+)\](?::(\d+))?$/.exec(address) ?? /^([^:]+)(?::(\d+))?$/.exec(address);
  return { host: match?.[1] ?? address, port: Number(match?.[2] ?? 7233) };
}
