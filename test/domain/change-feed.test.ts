/**
 * The change feed's cursor rules (domain/change-feed.ts): what a cursor may look like, and that one
 * past the feed's head is refused — this store never gave it out.
 */
import { describe, expect, it } from 'vitest';
import { ChangeFeedParamsError, checkCursorWithinHead, parseCursor } from '../../domain/change-feed';

describe('parseCursor', () => {
  it('takes no cursor as the start and canonicalises digits', () => {
    expect(parseCursor(undefined)).toBe('0');
    expect(parseCursor('0')).toBe('0');
    expect(parseCursor('007')).toBe('7');
  });

  it('refuses an empty cursor: a lost one (an unset variable), not a request to start over', () => {
    expect(() => parseCursor('')).toThrow(ChangeFeedParamsError);
    expect(() => parseCursor('')).toThrow(/empty/);
  });

  it('refuses what is not a cursor', () => {
    for (const raw of ['abc', '-1', '1.5', ' 1', '99999999999999999999'])
      expect(() => parseCursor(raw), raw).toThrow(ChangeFeedParamsError);
  });
});

describe('checkCursorWithinHead', () => {
  it('accepts the start, any cursor up to the head, and the head itself', () => {
    expect(() => checkCursorWithinHead('0', '0')).not.toThrow();
    expect(() => checkCursorWithinHead('0', '48')).not.toThrow();
    expect(() => checkCursorWithinHead('47', '48')).not.toThrow();
    expect(() => checkCursorWithinHead('48', '48')).not.toThrow();
  });

  it('refuses a cursor past the head, naming the head and where such a cursor comes from', () => {
    expect(() => checkCursorWithinHead('1000', '48')).toThrow(ChangeFeedParamsError);
    expect(() => checkCursorWithinHead('1000', '48')).toThrow(
      /cursor "1000" is beyond this feed's head \(48\).*another store or from before a reset/,
    );
    expect(() => checkCursorWithinHead('1', '0')).toThrow(/head \(0\)/);
    // Compared as numbers, not as text ('9' > '10' as strings).
    expect(() => checkCursorWithinHead('9', '10')).not.toThrow();
    expect(() => checkCursorWithinHead('9223372036854775807', '9223372036854775806')).toThrow(
      ChangeFeedParamsError,
    );
  });
});
