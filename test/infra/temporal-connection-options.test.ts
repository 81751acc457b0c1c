/**
 * The Temporal CLI's connection variables (`temporal options`) read into the TLS and API-key options
 * both SDK connections take: TLS on when asked for or implied, every file checked before use, and
 * each mistake one line naming its variable. Without TEMPORAL_ADDRESS nothing applies: the embedded
 * dev server is plaintext on loopback.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ignoredTemporalSettings,
  TemporalConfigError,
  temporalConnectionOptions,
} from '../../infra/temporal-connection-options';
import { tlsFixture } from '../../testbed/tls-proxy';

const ADDRESS = { TEMPORAL_ADDRESS: 'temporal.example:7233' };
const CA = tlsFixture('ca.pem');
const CERT = tlsFixture('client.pem');
const KEY = tlsFixture('client.key');
const MTLS = {
  ...ADDRESS,
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: CA,
  TEMPORAL_TLS_CLIENT_CERT_PATH: CERT,
  TEMPORAL_TLS_CLIENT_KEY_PATH: KEY,
};
const scratch = mkdtempSync(path.join(os.tmpdir(), 'gleaner-tls-env-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The error's message, which the CLI prints as `gleaner: <message>`. */
function failure(env: Record<string, string>): string {
  try {
    temporalConnectionOptions(env);
  } catch (error) {
    expect(error).toBeInstanceOf(TemporalConfigError);
    const message = (error as Error).message;
    expect(message).not.toContain('\n');
    return message;
  }
  throw new Error('expected a TemporalConfigError');
}

describe('TLS and API key from the Temporal CLI variables', () => {
  it('leaves the embedded default alone: nothing applies without TEMPORAL_ADDRESS, valid or not', () => {
    const { TEMPORAL_ADDRESS: _, ...withoutAddress } = MTLS;
    expect(
      temporalConnectionOptions({ ...withoutAddress, TEMPORAL_API_KEY: 'k', TEMPORAL_TLS: 'true' }),
    ).toEqual({});
    expect(
      temporalConnectionOptions({ TEMPORAL_TLS: 'yes', TEMPORAL_TLS_CLIENT_CERT_PATH: '/nope' }),
    ).toEqual({});
  });

  it('names the settings it ignores without TEMPORAL_ADDRESS, so the person is told', () => {
    expect(
      ignoredTemporalSettings({
        TEMPORAL_TLS_CLIENT_CERT_PATH: '/c.pem',
        TEMPORAL_API_KEY: 'k',
        TEMPORAL_TLS_SERVER_NAME: '',
        TEMPORAL_NAMESPACE: 'ns',
      }),
    ).toEqual(['TEMPORAL_API_KEY', 'TEMPORAL_TLS_CLIENT_CERT_PATH']);
    expect(ignoredTemporalSettings({ TEMPORAL_NAMESPACE: 'ns' })).toEqual([]);
    expect(ignoredTemporalSettings({ ...MTLS, TEMPORAL_API_KEY: 'k' })).toEqual([]);
  });

  it('is plaintext with an address alone, and with empty variables', () => {
    expect(temporalConnectionOptions(ADDRESS)).toEqual({});
    expect(
      temporalConnectionOptions({
        ...ADDRESS,
        TEMPORAL_TLS: '',
        TEMPORAL_API_KEY: ' ',
        TEMPORAL_TLS_CLIENT_CERT_PATH: '',
      }),
    ).toEqual({});
  });

  it('turns TLS on with TEMPORAL_TLS in the spellings the CLI takes, and off with false', () => {
    for (const on of ['true', 'TRUE', 'True', '1', 't'])
      expect(temporalConnectionOptions({ ...ADDRESS, TEMPORAL_TLS: on })).toEqual({ tls: {} });
    for (const off of ['false', 'FALSE', '0', 'f'])
      expect(temporalConnectionOptions({ ...ADDRESS, TEMPORAL_TLS: off })).toEqual({ tls: false });
  });

  it('carries TEMPORAL_API_KEY and turns TLS on for it, unless TEMPORAL_TLS is false', () => {
    expect(temporalConnectionOptions({ ...ADDRESS, TEMPORAL_API_KEY: 'key-123\n' })).toEqual({
      apiKey: 'key-123',
      tls: {},
    });
    expect(
      temporalConnectionOptions({ ...ADDRESS, TEMPORAL_API_KEY: 'key-123', TEMPORAL_TLS: 'false' }),
    ).toEqual({
      apiKey: 'key-123',
      tls: false,
    });
  });

  it('reads the CA, client certificate and key from files, and the server name', () => {
    const options = temporalConnectionOptions({ ...MTLS, TEMPORAL_TLS_SERVER_NAME: 'temporal.internal' });
    expect(options).toEqual({
      tls: {
        serverRootCACertificate: readFileSync(CA),
        clientCertPair: { crt: readFileSync(CERT), key: readFileSync(KEY) },
        serverNameOverride: 'temporal.internal',
      },
    });
  });

  it('takes the same PEM inline from the _DATA variables', () => {
    const options = temporalConnectionOptions({
      ...ADDRESS,
      TEMPORAL_TLS_SERVER_CA_CERT_DATA: readFileSync(CA, 'utf8'),
      TEMPORAL_TLS_CLIENT_CERT_DATA: readFileSync(CERT, 'utf8'),
      TEMPORAL_TLS_CLIENT_KEY_DATA: readFileSync(KEY, 'utf8'),
    });
    expect(options).toEqual(temporalConnectionOptions(MTLS));
  });

  it('turns TLS on for any TLS setting alone (a CA for a private cluster, a server name)', () => {
    expect(temporalConnectionOptions({ ...ADDRESS, TEMPORAL_TLS_SERVER_CA_CERT_PATH: CA })).toEqual({
      tls: { serverRootCACertificate: readFileSync(CA) },
    });
    expect(temporalConnectionOptions({ ...ADDRESS, TEMPORAL_TLS_SERVER_NAME: 'x.example' })).toEqual({
      tls: { serverNameOverride: 'x.example' },
    });
  });
});

describe('bad Temporal connection settings are one line naming the variable', () => {
  it('refuses a TEMPORAL_TLS that is not a boolean', () => {
    expect(failure({ ...ADDRESS, TEMPORAL_TLS: 'yes' })).toBe(
      'TEMPORAL_TLS must be true or false, not "yes"',
    );
  });

  it('refuses a path that does not exist', () => {
    expect(failure({ ...MTLS, TEMPORAL_TLS_CLIENT_CERT_PATH: '/no/such/client.pem' })).toBe(
      'TEMPORAL_TLS_CLIENT_CERT_PATH=/no/such/client.pem cannot be read: no such file',
    );
    expect(failure({ ...ADDRESS, TEMPORAL_TLS_SERVER_CA_CERT_PATH: '/no/such/ca.pem' })).toBe(
      'TEMPORAL_TLS_SERVER_CA_CERT_PATH=/no/such/ca.pem cannot be read: no such file',
    );
  });

  it('refuses a path that cannot be read as a file', () => {
    expect(failure({ ...MTLS, TEMPORAL_TLS_CLIENT_KEY_PATH: scratch })).toBe(
      `TEMPORAL_TLS_CLIENT_KEY_PATH=${scratch} cannot be read: it is a directory`,
    );
  });

  // root reads any file whatever its mode.
  it.skipIf(process.getuid?.() === 0)('refuses a file without read permission', () => {
    const locked = path.join(scratch, 'locked.key');
    writeFileSync(locked, readFileSync(KEY));
    chmodSync(locked, 0o000);
    expect(failure({ ...MTLS, TEMPORAL_TLS_CLIENT_KEY_PATH: locked })).toBe(
      `TEMPORAL_TLS_CLIENT_KEY_PATH=${locked} cannot be read: permission denied`,
    );
  });

  it('refuses a client certificate without its key, and a key without its certificate', () => {
    expect(failure({ ...ADDRESS, TEMPORAL_TLS_CLIENT_CERT_PATH: CERT })).toBe(
      'TEMPORAL_TLS_CLIENT_CERT_PATH is set without its private key: set TEMPORAL_TLS_CLIENT_KEY_PATH or TEMPORAL_TLS_CLIENT_KEY_DATA',
    );
    expect(failure({ ...ADDRESS, TEMPORAL_TLS_CLIENT_KEY_DATA: readFileSync(KEY, 'utf8') })).toBe(
      'TEMPORAL_TLS_CLIENT_KEY_DATA is set without its certificate: set TEMPORAL_TLS_CLIENT_CERT_PATH or TEMPORAL_TLS_CLIENT_CERT_DATA',
    );
  });

  it('refuses a key that does not belong to the certificate', () => {
    expect(failure({ ...MTLS, TEMPORAL_TLS_CLIENT_KEY_PATH: tlsFixture('server.key') })).toBe(
      'TEMPORAL_TLS_CLIENT_KEY_PATH is not the private key of the certificate in TEMPORAL_TLS_CLIENT_CERT_PATH',
    );
  });

  it('refuses files that hold no PEM certificate or key', () => {
    expect(failure({ ...MTLS, TEMPORAL_TLS_SERVER_CA_CERT_PATH: KEY })).toMatch(
      /^TEMPORAL_TLS_SERVER_CA_CERT_PATH holds no PEM certificate: /,
    );
    expect(
      failure({
        ...MTLS,
        TEMPORAL_TLS_CLIENT_CERT_DATA: 'not a certificate',
        TEMPORAL_TLS_CLIENT_CERT_PATH: '',
      }),
    ).toMatch(/^TEMPORAL_TLS_CLIENT_CERT_DATA holds no PEM certificate: /);
    expect(failure({ ...MTLS, TEMPORAL_TLS_CLIENT_KEY_PATH: CERT })).toMatch(
      /^TEMPORAL_TLS_CLIENT_KEY_PATH holds no usable PEM private key: /,
    );
  });

  it('refuses a path and inline data for the same thing', () => {
    expect(failure({ ...MTLS, TEMPORAL_TLS_CLIENT_CERT_DATA: readFileSync(CERT, 'utf8') })).toBe(
      'set TEMPORAL_TLS_CLIENT_CERT_PATH or TEMPORAL_TLS_CLIENT_CERT_DATA, not both',
    );
  });

  it('refuses TEMPORAL_TLS=false beside a TLS setting', () => {
    expect(failure({ ...MTLS, TEMPORAL_TLS: 'false' })).toBe(
      'TEMPORAL_TLS is false but TEMPORAL_TLS_SERVER_CA_CERT_PATH is set: unset one of them',
    );
  });

  it('refuses TEMPORAL_TLS_DISABLE_HOST_VERIFICATION, which the SDK cannot honour, rather than ignore it', () => {
    expect(failure({ ...MTLS, TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: 'true' })).toMatch(
      /^TEMPORAL_TLS_DISABLE_HOST_VERIFICATION is not supported .*set TEMPORAL_TLS_SERVER_NAME/,
    );
    expect(failure({ ...MTLS, TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: 'maybe' })).toBe(
      'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION must be true or false, not "maybe"',
    );
    // false asks for what happens anyway.
    expect(temporalConnectionOptions({ ...MTLS, TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: 'false' })).toEqual(
      temporalConnectionOptions(MTLS),
    );
  });
});
