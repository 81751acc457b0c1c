import { describe, expect, it } from 'vitest';
import { InvalidCrawlSpecError, parseCrawlSpec } from '../../domain/crawl-spec';
import {
  checkCron,
  checkScheduleId,
  crawlIdOfWorkflowId,
  defaultScheduleId,
  InvalidScheduleError,
  nominalTimeSuffix,
  overlapName,
  parseCadence,
  parseDurationMs,
  parseInterval,
  scheduledCrawlId,
  scheduleWorkflowIdBase,
} from '../../domain/schedule-spec';

describe('durations', () => {
  it('reads units and sums compound durations', () => {
    expect(parseDurationMs('1500ms')).toBe(1_500);
    expect(parseDurationMs('30s')).toBe(30_000);
    expect(parseDurationMs('5m')).toBe(300_000);
    expect(parseDurationMs('1h30m')).toBe(5_400_000);
    expect(parseDurationMs(' 2d ')).toBe(172_800_000);
  });

  it('refuses bare numbers, other units and garbage', () => {
    for (const text of ['5', '', '1.5h', '-1h', '1 h', '1y', 'soon', '1h-']) {
      expect(() => parseDurationMs(text), text).toThrow(InvalidScheduleError);
    }
  });

  it('holds intervals to whole seconds of at least one', () => {
    expect(parseInterval('1s')).toBe(1_000);
    expect(() => parseInterval('999ms')).toThrow(/shorter than Temporal's minimum of 1s/);
    expect(() => parseInterval('1500ms')).toThrow(/whole seconds/);
  });
});

describe('cadence', () => {
  it('takes exactly one of --every and --cron', () => {
    expect(parseCadence({ every: '6h' })).toEqual({ every: '6h', everyMs: 21_600_000 });
    expect(parseCadence({ cron: '0 3 * * *' })).toEqual({ cron: '0 3 * * *' });
    expect(() => parseCadence({})).toThrow(/needs --every/);
    expect(() => parseCadence({ every: '1h', cron: '@daily' })).toThrow(/not both/);
  });

  it('checks the shape of cron expressions and leaves the rest to Temporal', () => {
    for (const ok of [
      '0 3 * * *',
      '*/15 * * * MON-FRI',
      '@daily',
      'CRON_TZ=Europe/Paris 0 3 * * *',
      '0 0 3 * * * 2027',
    ]) {
      expect(checkCron(ok), ok).toBe(ok);
    }
    expect(() => checkCron('every day')).toThrow(/needs 5 fields/);
    expect(() => checkCron('0 3 * *')).toThrow(/needs 5 fields/);
    expect(() => checkCron('0 3 * * * ; rm')).toThrow(/characters cron does not use/);
  });
});

describe('ids', () => {
  it('accepts schedule ids in the crawl id alphabet, up to 60 characters', () => {
    expect(checkScheduleId('docs_nightly.v2-1')).toBe('docs_nightly.v2-1');
    for (const bad of ['', 'a b', 'a/b', 'a:b', 'x'.repeat(61)])
      expect(() => checkScheduleId(bad), bad).toThrow(InvalidScheduleError);
  });

  it('names each fire as Temporal does: the action id plus the nominal time in whole UTC seconds', () => {
    const nominal = new Date('2026-11-25T03:00:00.750Z');
    expect(nominalTimeSuffix(nominal)).toBe('2026-11-25T03:00:00Z');
    expect(scheduleWorkflowIdBase('docs')).toBe('crawl-docs');
    expect(scheduledCrawlId('docs', nominal)).toBe('docs-2026-11-25T03:00:00Z');
    expect(crawlIdOfWorkflowId(`${scheduleWorkflowIdBase('docs')}-${nominalTimeSuffix(nominal)}`)).toBe(
      'docs-2026-11-25T03:00:00Z',
    );
  });

  it('the crawl spec accepts a scheduled crawl id and still refuses other colons', () => {
    const scheduled = scheduledCrawlId('docs', new Date('2026-11-25T03:00:00Z'));
    expect(parseCrawlSpec({ crawlId: scheduled, seeds: ['https://example.org/'] }).crawlId).toBe(scheduled);
    for (const bad of ['docs:1', 'docs-2026-11-25T03:00:00', 'docs-2026-11-25 03:00:00Z']) {
      expect(() => parseCrawlSpec({ crawlId: bad, seeds: ['https://example.org/'] }), bad).toThrow(
        InvalidCrawlSpecError,
      );
    }
  });

  it('derives a readable default id from the first seed', () => {
    expect(defaultScheduleId('https://docs.example.com:8443/a', 'be7a')).toBe('docs.example.com-8443-be7a');
    expect(defaultScheduleId('not a url', '0001')).toBe('crawl-0001');
  });

  it('maps Temporal overlap policies back to CLI names', () => {
    expect(overlapName('BUFFER_ONE')).toBe('buffer-one');
    expect(overlapName(undefined)).toBe('skip');
  });
});
