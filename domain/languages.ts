/**
 * Language codes as gleaner reads them (issue 27 item 4): a declared tag normalised to ISO 639-1,
 * and a `--lang` list checked against the languages the detector (extract/language.ts) knows. Pure,
 * so the crawl spec can validate `lang` where workflows parse it.
 */

/** The languages eld's database knows (ISO 639-1); `--lang` accepts these (and `id`, read as `ms`). */
export const DETECTABLE_LANGUAGES: readonly string[] = (
  'am ar az be bg bn ca cs da de el en es et eu fa fi fr gu he hi hr hu hy is it ja ka kn ko ' +
  'ku lo lt lv ml mr ms nl no or pa pl pt ro ru sk sl sq sr sv ta te th tl tr uk ur vi yo zh'
).split(' ');

/**
 * Languages the detector cannot tell apart, as groups whose members match each other in a verdict:
 * eld has no Indonesian and answers Malay for it. (Norwegian Bokmål and Nynorsk, one code to it,
 * are folded by normalizeLanguageTag instead.)
 */
const SAME_TO_DETECTOR: readonly (readonly string[])[] = [['ms', 'id']];

/** ISO 639-2/3 codes a page may declare, and retired 639-1 codes, mapped to current ISO 639-1. */
const TAG_ALIASES: Record<string, string> = {
  iw: 'he',
  in: 'id',
  ji: 'yi',
  jw: 'jv',
  mo: 'ro',
  nb: 'no',
  nn: 'no',
  fil: 'tl',
  eng: 'en',
  deu: 'de',
  ger: 'de',
  fra: 'fr',
  fre: 'fr',
  spa: 'es',
  ita: 'it',
  por: 'pt',
  nld: 'nl',
  dut: 'nl',
  rus: 'ru',
  ukr: 'uk',
  pol: 'pl',
  ces: 'cs',
  cze: 'cs',
  swe: 'sv',
  nor: 'no',
  dan: 'da',
  fin: 'fi',
  hun: 'hu',
  tur: 'tr',
  jpn: 'ja',
  zho: 'zh',
  chi: 'zh',
  cmn: 'zh',
  kor: 'ko',
  ara: 'ar',
  heb: 'he',
  hin: 'hi',
  ell: 'el',
  gre: 'el',
  vie: 'vi',
  ind: 'id',
  msa: 'ms',
  may: 'ms',
  ron: 'ro',
  rum: 'ro',
  bul: 'bg',
  cat: 'ca',
  tha: 'th',
  fas: 'fa',
  per: 'fa',
};

/**
 * A declared language tag (`<html lang>`, Content-Language, a `--lang` code) as ISO 639-1:
 * 'en-US' → 'en', 'zh_Hans' → 'zh', 'iw' → 'he', 'nb' → 'no', 'deu' → 'de'. Undefined for what names
 * no language: empty, 'und', 'mul', 'zxx', 'x-default', '*', malformed tags. A Content-Language
 * listing several takes the first.
 */
export function normalizeLanguageTag(declared: string | null | undefined): string | undefined {
  if (!declared) return undefined;
  const first = declared.split(',')[0]?.trim().toLowerCase() ?? '';
  const primary = first.split(/[-_]/)[0] ?? '';
  if (!/^[a-z]{2,3}$/.test(primary)) return undefined;
  const code = TAG_ALIASES[primary] ?? primary;
  return /^[a-z]{2}$/.test(code) ? code : undefined;
}

/** A `--lang` value that names no language the detector knows. */
export class LanguageListError extends Error {
  override name = 'LanguageListError';
}

/**
 * `--lang en,de` → ['en', 'de']: each code normalised, duplicates dropped. Throws LanguageListError
 * for an empty list or a code the detector cannot recognise, since pages in it could only be
 * misjudged.
 */
export function parseLanguageList(value: string): string[] {
  const codes: string[] = [];
  for (const raw of value.split(',')) {
    const item = raw.trim();
    if (item === '') continue;
    const code = normalizeLanguageTag(item);
    if (!code)
      throw new LanguageListError(`--lang: "${item}" is not a language code (use ISO 639-1, e.g. en,de)`);
    if (
      !DETECTABLE_LANGUAGES.includes(code) &&
      !sameToDetector(code).some((c) => DETECTABLE_LANGUAGES.includes(c))
    ) {
      throw new LanguageListError(
        `--lang: the language detector cannot recognise "${code}"; it knows ${DETECTABLE_LANGUAGES.join(',')}`,
      );
    }
    if (!codes.includes(code)) codes.push(code);
  }
  if (codes.length === 0)
    throw new LanguageListError('--lang: expected one or more language codes, e.g. en,de');
  return codes;
}

export function sameToDetector(code: string): readonly string[] {
  return SAME_TO_DETECTOR.find((group) => group.includes(code)) ?? [code];
}
