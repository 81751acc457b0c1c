/** `lang` in the crawl spec: `gleaner crawl --lang`, the API body's `lang` (issue 27 item 4). */
import { describe, expect, it } from 'vitest';
import { specFromBody } from '../../api/routes/crawl-routes';
import { specFromFlags } from '../../cli/crawl-flags';
import { UsageError } from '../../cli/errors';
import { parseCrawlSpec } from '../../domain/crawl-spec';

const SEED = 'http://127.0.0.1:8080/';

describe('crawl spec lang', () => {
  it('keeps every language by default and normalises the codes given', () => {
    expect(parseCrawlSpec({ seeds: [SEED] }, 'c1').lang).toEqual([]);
    expect(specFromFlags([SEED], { lang: ['EN', 'de-AT', 'en'] }).lang).toEqual(['en', 'de']);
    expect(specFromBody({ seeds: [SEED], lang: ['fr'] }).lang).toEqual(['fr']);
  });

  it("refuses a code that names no language, in the flag's words on the command line (exit 2)", () => {
    expect(() => specFromFlags([SEED], { lang: ['english'] })).toThrow(UsageError);
    expect(() => specFromFlags([SEED], { lang: ['english'] })).toThrow(
      /^--lang: "english" is not a language code \(use ISO 639-1, e\.g\. en,de\)$/,
    );
    expect(() => specFromFlags([SEED], { lang: ['yi'] })).toThrow(
      /--lang: the language detector cannot recognise "yi"/,
    );
  });

  it('refuses it as a 400 naming the body field in the API', () => {
    let caught: unknown;
    try {
      specFromBody({ seeds: [SEED], lang: ['klingon'] });
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({ statusCode: 400 });
    expect((caught as Error).message).toMatch(/body field "lang": "klingon" is not a language code/);
  });
});
