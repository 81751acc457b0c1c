/**
 * Language detection reads page text written by strangers. Its cleaning pass (proseOnly) must run
 * in time linear in its input: an e-mail pattern that backtracked took 54 s on "é@" repeated across
 * three 3,000-character windows. And detectLanguage itself reads a bounded sample, so a huge
 * page costs it no more than a short one.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadLanguageDetector, proseOnly } from '../../extract/language';
import { expectLinear, repeatTo } from '../../testbed/linear-time';

/** Pieces that make cleaning patterns backtrack: fences, backticks, links, addresses, URLs, long words. */
const PIECES = ['```', '~~~', '`', '](', '[', ')', '@', 'é@', '.', 'www.', 'http://', 'x', 'é', ' ', '\n'];
const NAMED = ['é@', '](', '`a\n', '```a', 'www.', 'x.', 'a'];
const shape = fc.oneof(
  fc.constantFrom(...NAMED),
  fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 3 }).map((pieces) => pieces.join('')),
);

describe('proseOnly runs in linear time', () => {
  it('on the shapes that made it quadratic or worse', () => {
    for (const unit of NAMED) {
      expectLinear(`proseOnly ${JSON.stringify(unit)}`, proseOnly, (chars) => repeatTo(chars, unit), {
        bytes: 16_000,
        maxMsPerKb: 1,
      });
    }
  });

  it('on generated shapes', () => {
    fc.assert(
      fc.property(shape, (unit) => {
        expectLinear(`proseOnly ${JSON.stringify(unit)}`, proseOnly, (chars) => repeatTo(chars, unit), {
          bytes: 16_000,
          maxMsPerKb: 1,
        });
      }),
      { numRuns: 20 },
    );
  });
});

describe('detectLanguage reads a bounded sample', () => {
  it('answers on 4 MB of pathological text about as fast as on 4 KB', async () => {
    const detector = await loadLanguageDetector();
    // Each input is built and read once before timing: building a 4 MB string by concatenation
    // leaves a rope that the first read flattens, and that is the test's cost, not detection's.
    const fastest = (text: string) => {
      detector.detect(text);
      let best = Number.POSITIVE_INFINITY;
      for (let run = 0; run < 3; run++) {
        const start = performance.now();
        detector.detect(text);
        best = Math.min(best, performance.now() - start);
      }
      return best;
    };
    for (const unit of NAMED) {
      const small = fastest(repeatTo(4_000, unit));
      const large = fastest(repeatTo(4_000_000, unit));
      // ×1000 in size: a bounded sample stays within a small multiple of the small input's time.
      expect(
        large,
        `${JSON.stringify(unit)}: 4 KB ${small.toFixed(2)} ms, 4 MB ${large.toFixed(2)} ms`,
      ).toBeLessThan(Math.max(10, 20 * small));
    }
  });
});
