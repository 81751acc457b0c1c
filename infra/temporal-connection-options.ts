/**
 * TLS, mTLS and API-key settings for the Temporal cluster TEMPORAL_ADDRESS names, read from the
 * variables the Temporal CLI reads (`temporal options`), so the shell that drives `temporal` drives
 * gleaner too. Every file and value is checked here, before any work, so a bad one is one line that
 * names its variable rather than a handshake failure later. The embedded dev server (no
 * TEMPORAL_ADDRESS) is plain gRPC on loopback and never gets these.
 */
import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { TLSConfig } from '@temporalio/client';

/** A Temporal connection variable is malformed, contradicts another, or names an unusable file. */
export class TemporalConfigError extends Error {
  override readonly name = 'TemporalConfigError';
}

/**
 * Spread into `Connection.connect` (@temporalio/client) and `NativeConnection.connect`
 * (@temporalio/worker) beside the address: both take these two fields with these types.
 */
export interface TemporalConnectionOptions {
  /** `false` only when TEMPORAL_TLS says so; absent: plaintext. */
  tls?: TLSConfig | false;
  /** Sent as `Authorization: Bearer …` on every call. */
  apiKey?: string;
}

type Env = Readonly<Record<string, string | undefined>>;

/** A certificate or key from its `_PATH` or `_DATA` variable, with the name it came from. */
interface Pem {
  bytes: Buffer;
  source: string;
}

/**
 * The options for TEMPORAL_ADDRESS's cluster; none without TEMPORAL_ADDRESS (the embedded default).
 * As in the CLI, TLS is on when TEMPORAL_TLS is true, or unset and an API key or any TLS setting is.
 * @throws TemporalConfigError naming the variable at fault
 */
export function temporalConnectionOptions(env: Env = process.env): TemporalConnectionOptions {
  if (!variable(env, 'TEMPORAL_ADDRESS')) return {};
  const tlsFlag = booleanVariable(env, 'TEMPORAL_TLS');
  // Workers connect through the SDK's Rust core, whose TLS settings have no switch for this; a
  // client that skipped the check while its workers could not connect would hide the mistake.
  if (booleanVariable(env, 'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION')) {
    throw new TemporalConfigError(
      'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION is not supported (the Temporal TypeScript SDK always verifies the server name): ' +
        "set TEMPORAL_TLS_SERVER_NAME to a name in the server's certificate instead",
    );
  }
  const ca = pemVariable(env, 'TEMPORAL_TLS_SERVER_CA_CERT');
  const cert = pemVariable(env, 'TEMPORAL_TLS_CLIENT_CERT');
  const key = pemVariable(env, 'TEMPORAL_TLS_CLIENT_KEY');
  const serverName = variable(env, 'TEMPORAL_TLS_SERVER_NAME');
  const apiKey = variable(env, 'TEMPORAL_API_KEY')?.trim();

  const tlsSetting = ca?.source ?? cert?.source ?? key?.source ?? (serverName && 'TEMPORAL_TLS_SERVER_NAME');
  if (tlsFlag === false && tlsSetting) {
    throw new TemporalConfigError(`TEMPORAL_TLS is false but ${tlsSetting} is set: unset one of them`);
  }
  if (cert && !key) {
    throw new TemporalConfigError(
      `${cert.source} is set without its private key: set TEMPORAL_TLS_CLIENT_KEY_PATH or TEMPORAL_TLS_CLIENT_KEY_DATA`,
    );
  }
  if (key && !cert) {
    throw new TemporalConfigError(
      `${key.source} is set without its certificate: set TEMPORAL_TLS_CLIENT_CERT_PATH or TEMPORAL_TLS_CLIENT_CERT_DATA`,
    );
  }
  if (ca) certificateOf(ca);
  if (cert && key && !certificateOf(cert).checkPrivateKey(privateKeyOf(key))) {
    throw new TemporalConfigError(
      `${key.source} is not the private key of the certificate in ${cert.source}`,
    );
  }

  const options: TemporalConnectionOptions = {};
  if (apiKey) options.apiKey = apiKey;
  if (tlsFlag === false) options.tls = false;
  else if (tlsFlag || tlsSetting || apiKey) {
    options.tls = {
      ...(ca ? { serverRootCACertificate: ca.bytes } : {}),
      ...(cert && key ? { clientCertPair: { crt: cert.bytes, key: key.bytes } } : {}),
      ...(serverName ? { serverNameOverride: serverName } : {}),
    };
  }
  return options;
}

/**
 * The TLS and API-key variables set while TEMPORAL_ADDRESS is not: they apply to no connection (the
 * embedded dev server is plain gRPC on loopback), which a person who set them for a cluster and
 * forgot its address should be told rather than find their crawl in a local Temporal.
 */
export function ignoredTemporalSettings(env: Env = process.env): string[] {
  if (variable(env, 'TEMPORAL_ADDRESS')) return [];
  return Object.keys(env)
    .filter((name) => (name === 'TEMPORAL_API_KEY' || name.startsWith('TEMPORAL_TLS')) && variable(env, name))
    .sort();
}

/** An empty variable counts as unset, as `VAR= gleaner …` means to clear it. */
function variable(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value;
}

/** The spellings Go's strconv.ParseBool takes (the CLI's parser), in any case. */
function booleanVariable(env: Env, name: string): boolean | undefined {
  const value = variable(env, name);
  if (value === undefined) return undefined;
  const lower = value.trim().toLowerCase();
  if (['1', 't', 'true'].includes(lower)) return true;
  if (['0', 'f', 'false'].includes(lower)) return false;
  throw new TemporalConfigError(`${name} must be true or false, not ${JSON.stringify(value)}`);
}

function pemVariable(env: Env, prefix: string): Pem | undefined {
  const pathName = `${prefix}_PATH`;
  const dataName = `${prefix}_DATA`;
  const file = variable(env, pathName);
  const data = variable(env, dataName);
  if (file && data) throw new TemporalConfigError(`set ${pathName} or ${dataName}, not both`);
  if (data) return { bytes: Buffer.from(data), source: dataName };
  if (!file) return undefined;
  try {
    return { bytes: readFileSync(file), source: pathName };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EACCES'
          ? 'permission denied'
          : code === 'EISDIR'
            ? 'it is a directory'
            : (error as Error).message;
    throw new TemporalConfigError(`${pathName}=${file} cannot be read: ${why}`, { cause: error });
  }
}

/** Both the SDK's TLS stacks (grpc-js for clients, the Rust core for workers) take PEM only. */
function certificateOf(pem: Pem): X509Certificate {
  try {
    if (!pem.bytes.includes('-----BEGIN CERTIFICATE-----')) throw new Error('no PEM certificate block');
    return new X509Certificate(pem.bytes);
  } catch (error) {
    throw new TemporalConfigError(`${pem.source} holds no PEM certificate: ${oneLine(error)}`, {
      cause: error,
    });
  }
}

function privateKeyOf(pem: Pem): KeyObject {
  try {
    if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(pem.bytes.toString('latin1')))
      throw new Error('no PEM private key block');
    return createPrivateKey(pem.bytes);
  } catch (error) {
    throw new TemporalConfigError(`${pem.source} holds no usable PEM private key: ${oneLine(error)}`, {
      cause: error,
    });
  }
}

function oneLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ').trim();
}
