/**
 * Webhook signing and verification (activities/webhook-signature.ts over domain/webhook-events.ts),
 * the retry classification of answers, and `notify` validation in the spec, the CLI and the API's
 * spec builder.
 */
import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { signWebhook, verifyWebhookSignature } from '../../activities/webhook-signature';
import { specFromFlags } from '../../cli/crawl-flags';
import { UsageError } from '../../cli/errors';
import { buildCrawlSpec } from '../../domain/crawl-request';
import { InvalidCrawlSpecError, parseCrawlSpec } from '../../domain/crawl-spec';
import {
  isRetryableStatus,
  parseSignatureHeader,
  webhookBody,
  webhookDeliveryId,
} from '../../domain/webhook-events';

const SECRET = 'whsec-test-0123456789';
const body = webhookBody({
  id: webhookDeliveryId('c1', 'crawl.completed'),
  type: 'crawl.completed',
  crawlId: 'c1',
  createdAt: '2026-11-27T02:00:00.000Z',
  data: { pagesFetched: 3 },
});

describe('webhook signatures', () => {
  it('are HMAC-SHA256 of "<t>.<body>" in a t=…,v1=… header, as a receiver recomputes it', () => {
    const header = signWebhook(SECRET, 1_790_000_000, body);
    const expected = createHmac('sha256', SECRET).update(`1790000000.${body}`).digest('hex');
    expect(header).toBe(`t=1790000000,v1=${expected}`);
    expect(verifyWebhookSignature(SECRET, header, body, { nowSeconds: 1_790_000_010 })).toEqual({
      ok: true,
      timestampSeconds: 1_790_000_000,
    });
  });

  it('fail with a wrong secret, a changed body, a changed timestamp or a garbled header', () => {
    const now = 1_790_000_000;
    const header = signWebhook(SECRET, now, body);
    const at = { nowSeconds: now };
    expect(verifyWebhookSignature('another-secret', header, body, at)).toEqual({
      ok: false,
      reason: 'mismatch',
    });
    expect(verifyWebhookSignature(SECRET, header, body.replace('3', '4'), at).ok).toBe(false);
    expect(verifyWebhookSignature(SECRET, header.replace(`t=${now}`, `t=${now + 1}`), body, at).ok).toBe(
      false,
    );
    expect(verifyWebhookSignature(SECRET, undefined, body, at)).toEqual({ ok: false, reason: 'missing' });
    expect(verifyWebhookSignature(SECRET, 'v1=abc', body, at)).toEqual({ ok: false, reason: 'malformed' });
    expect(verifyWebhookSignature(SECRET, `t=${now},v1=${'0'.repeat(64)}`, body, at)).toEqual({
      ok: false,
      reason: 'mismatch',
    });
  });

  it('are refused when older or newer than the tolerance (a replayed request)', () => {
    const header = signWebhook(SECRET, 1_790_000_000, body);
    expect(verifyWebhookSignature(SECRET, header, body, { nowSeconds: 1_790_000_301 })).toEqual({
      ok: false,
      reason: 'expired',
    });
    expect(verifyWebhookSignature(SECRET, header, body, { nowSeconds: 1_789_999_600 }).ok).toBe(false);
    expect(verifyWebhookSignature(SECRET, header, body, { nowSeconds: 1_790_000_300 }).ok).toBe(true);
  });

  it('accept any of several v1 values (a sender rotating secrets)', () => {
    const header = signWebhook(SECRET, 1_790_000_000, body);
    const rotated = `t=1790000000,v1=${'a'.repeat(64)},${header.split(',')[1]}`;
    expect(parseSignatureHeader(rotated)?.signatures).toHaveLength(2);
    expect(verifyWebhookSignature(SECRET, rotated, body, { nowSeconds: 1_790_000_000 }).ok).toBe(true);
  });

  it('are never made with an empty secret', () => {
    expect(() => signWebhook('', 1, body)).toThrow(/empty/);
  });
});

describe('delivery ids and bodies', () => {
  it('are stable: crawl id, event type and batch number', () => {
    expect(webhookDeliveryId('site-2026-11-24T03:00:00Z', 'pages.changed', 3)).toBe(
      'site-2026-11-24T03:00:00Z/pages.changed/3',
    );
    expect(JSON.parse(body)).toEqual({
      id: 'c1/crawl.completed/0',
      type: 'crawl.completed',
      crawlId: 'c1',
      createdAt: '2026-11-27T02:00:00.000Z',
      data: { pagesFetched: 3 },
    });
  });
});

describe('which answers are retried', () => {
  it('retries 408, 429 and 5xx; not redirects (never followed) or other 4xx; 2xx is done', () => {
    for (const status of [408, 429, 500, 502, 503]) expect(isRetryableStatus(status), `${status}`).toBe(true);
    for (const status of [301, 302, 307, 308, 400, 401, 403, 404, 410, 422, 200, 204])
      expect(isRetryableStatus(status), `${status}`).toBe(false);
  });
});

describe('notify in the spec', () => {
  const seeds = ['https://example.org/'];

  it('defaults to no receivers and keeps http(s) ones', () => {
    expect(parseCrawlSpec({ crawlId: 'a', seeds }).notify).toEqual([]);
    const urls = ['https://hooks.example.com/gleaner', 'http://hooks.example.com:8080/x?y=1'];
    expect(parseCrawlSpec({ crawlId: 'a', seeds, notify: urls }).notify).toEqual(urls);
  });

  it('refuses other schemes, relative URLs and credentials, naming the field', () => {
    const problem = (notify: string[]) => {
      try {
        parseCrawlSpec({ crawlId: 'a', seeds, notify });
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidCrawlSpecError);
        return (error as Error).message;
      }
      return 'accepted';
    };
    expect(problem(['ftp://hooks.example.com/'])).toMatch(/notify\.0: only http and https .* not ftp/);
    expect(problem(['/relative'])).toMatch(/notify\.0: not an absolute URL/);
    expect(problem(['https://hooks.example.com/', 'https://user:pw@hooks.example.com/'])).toMatch(
      /notify\.1: must not carry credentials/,
    );
    expect(problem(Array.from({ length: 11 }, (_, i) => `https://h${i}.example.com/`))).toMatch(/notify/);
  });

  it('refuses a loopback or private IP receiver unless allowHosts lists it', () => {
    expect(() => buildCrawlSpec({ seeds, notify: ['http://127.0.0.1:9999/hook'] }, 'a')).toThrow(
      /notify\.0: 127\.0\.0\.1 is a loopback address.*--allow-host 127\.0\.0\.1/,
    );
    expect(() => buildCrawlSpec({ seeds, notify: ['http://[::1]:9999/hook'] }, 'a')).toThrow(/loopback/);
    expect(() => buildCrawlSpec({ seeds, notify: ['http://169.254.169.254/'] }, 'a')).toThrow(/notify\.0/);
    expect(
      buildCrawlSpec({ seeds, notify: ['http://127.0.0.1:9999/hook'], allowHosts: ['127.0.0.1'] }, 'a')
        .notify,
    ).toEqual(['http://127.0.0.1:9999/hook']);
  });
});

describe('--notify', () => {
  const saved = { secret: process.env.GLEANER_WEBHOOK_SECRET, temporal: process.env.TEMPORAL_ADDRESS };
  afterEach(() => {
    for (const [key, value] of [
      ['GLEANER_WEBHOOK_SECRET', saved.secret],
      ['TEMPORAL_ADDRESS', saved.temporal],
    ] as const) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });

  it('sets notify; bad URLs are usage errors in the flag’s words', () => {
    process.env.GLEANER_WEBHOOK_SECRET = SECRET;
    expect(
      specFromFlags(['https://example.org/'], { notify: ['https://hooks.example.com/a'] }).notify,
    ).toEqual(['https://hooks.example.com/a']);
    expect(() => specFromFlags(['https://example.org/'], { notify: ['mailto:me@example.com'] })).toThrow(
      /^--notify: only http and https/,
    );
    expect(() => specFromFlags(['https://example.org/'], { notify: ['http://10.0.0.5/hook'] })).toThrow(
      /--notify: 10\.0\.0\.5 is a private address/,
    );
  });

  it('needs GLEANER_WEBHOOK_SECRET when this process delivers, not when workers run elsewhere', () => {
    delete process.env.GLEANER_WEBHOOK_SECRET;
    delete process.env.TEMPORAL_ADDRESS;
    const flags = { notify: ['https://hooks.example.com/a'] };
    expect(() => specFromFlags(['https://example.org/'], flags)).toThrow(UsageError);
    expect(() => specFromFlags(['https://example.org/'], flags)).toThrow(/set GLEANER_WEBHOOK_SECRET/);
    process.env.TEMPORAL_ADDRESS = '127.0.0.1:7233';
    expect(specFromFlags(['https://example.org/'], flags).notify).toHaveLength(1);
    expect(() => specFromFlags(['https://example.org/'], { ...flags, localWorkers: true })).toThrow(
      /GLEANER_WEBHOOK_SECRET/,
    );
    // Without --notify nothing asks for a secret.
    delete process.env.TEMPORAL_ADDRESS;
    expect(specFromFlags(['https://example.org/'], {}).notify).toEqual([]);
  });
});
