import { describe, expect, it } from 'vitest';
import {
  DETECTABLE_LANGUAGES,
  detectLanguage,
  LanguageListError,
  languageVerdict,
  loadLanguageDetector,
  normalizeLanguageTag,
  parseLanguageList,
  sampleWindows,
} from '../../extract/language';

// Paragraphs written for this test, in the register of documentation and shop pages.
const SAMPLES = {
  en: 'The crawler reads each page once, keeps the main text and drops the navigation around it. When a site changes, only the pages whose text changed are embedded again, so a nightly recrawl of a large documentation site stays cheap.',
  de: 'Der Crawler liest jede Seite nur einmal, behält den eigentlichen Text und verwirft die Navigation drumherum. Wenn sich eine Website ändert, werden nur die Seiten neu eingebettet, deren Text sich wirklich geändert hat.',
  fr: "Le robot lit chaque page une seule fois, garde le texte principal et laisse de côté la navigation qui l'entoure. Quand un site change, seules les pages dont le texte a changé sont traitées de nouveau, ce qui garde le coût bas.",
  es: 'El rastreador lee cada página una sola vez, conserva el texto principal y descarta la navegación que lo rodea. Cuando un sitio cambia, solo se vuelven a procesar las páginas cuyo texto ha cambiado de verdad.',
  ja: 'このクローラーは各ページを一度だけ読み込み、本文を残してナビゲーションを取り除きます。サイトが更新されたときは、本文が変わったページだけを再び処理するので、毎晩の再クロールでも負担は小さいままです。',
  zh: '这个爬虫每个页面只读取一次，保留正文并去掉周围的导航。当网站发生变化时，只有正文真正改变的页面才会被重新处理，所以每晚重新抓取一个大型文档网站的成本仍然很低。',
  ru: 'Краулер читает каждую страницу один раз, сохраняет основной текст и убирает навигацию вокруг него. Когда сайт меняется, заново обрабатываются только те страницы, текст которых действительно изменился.',
} satisfies Record<string, string>;

describe('detectLanguage', () => {
  for (const [lang, text] of Object.entries(SAMPLES)) {
    it(`names ${lang} in a paragraph of it`, async () => {
      const result = await detectLanguage(text);
      expect(result.lang).toBe(lang);
      expect(result.confidence).toBeGreaterThanOrEqual(0.5);
    });
  }

  it('gives no answer for empty, blank or very short text, or for numbers and prices alone', async () => {
    for (const text of [
      '',
      '   \n\t ',
      'Buy now',
      'Home · About',
      '$459.99 €88 12/03/2025 16GB 4K 1080p 2x 3.35oz',
    ]) {
      expect(await detectLanguage(text), JSON.stringify(text)).toEqual({ lang: undefined, confidence: 0 });
    }
  });

  it('reads the prose of a code-heavy Markdown page, not its code or URLs', async () => {
    const code = [
      '```ts',
      'import { useEffect, useState } from "react";',
      'export function useWindowWidth(): number {',
      '  const [width, setWidth] = useState(window.innerWidth);',
      '  useEffect(() => { const onResize = () => setWidth(window.innerWidth); window.addEventListener("resize", onResize); return () => window.removeEventListener("resize", onResize); }, []);',
      '  return width;',
      '}',
      '```',
    ].join('\n');
    const page = [
      '# Effekte verwenden',
      'Mit dem Effekt-Hook kannst du Nebenwirkungen in Funktionskomponenten ausführen. Die Funktion läuft nach jedem Rendern, wenn sich ihre Abhängigkeiten geändert haben.',
      code,
      'Siehe [die Anleitung](https://example.com/docs/hooks-effect.html) und `useLayoutEffect` für Messungen, die vor dem Zeichnen des Bildschirms passieren müssen.',
      code,
      'Räume in der zurückgegebenen Funktion alles auf, was der Effekt angelegt hat, zum Beispiel Abonnements oder Zeitgeber.',
    ].join('\n\n');
    expect((await detectLanguage(page)).lang).toBe('de');
  });

  it('does not let an English template block at the top decide a long French page', async () => {
    const nav = 'Home Shop Blog About us Contact Sign in Cart Free shipping on orders over 50 euros. ';
    const body = Array.from({ length: 30 }, () => SAMPLES.fr).join(' ');
    // The first 1,000 characters are all template: a detector that reads only them says English.
    const result = await detectLanguage(`${nav.repeat(12)}${body}`);
    expect(result.lang).toBe('fr');
    expect(result.confidence).toBeLessThan(0.9);
  });

  it('reports a page two-thirds English, one-third German as English with less than full confidence', async () => {
    const english = Array.from({ length: 40 }, () => SAMPLES.en).join(' ');
    const german = Array.from({ length: 20 }, () => SAMPLES.de).join(' ');
    const result = await detectLanguage(`${english} ${german}`);
    expect(result.lang).toBe('en');
    expect(result.confidence).toBeGreaterThan(0.5);
    expect(result.confidence).toBeLessThan(0.9);
  });

  it('is unsure when no language holds half of the sampled text (English, German, French in thirds)', async () => {
    const detector = await loadLanguageDetector();
    const third = (text: string) => Array.from({ length: 15 }, () => text).join(' ');
    const result = detector.detect([third(SAMPLES.en), third(SAMPLES.de), third(SAMPLES.fr)].join(' '));
    expect(result.lang).toBeUndefined();
    expect(result.confidence).toBeGreaterThan(0.25);
    expect(result.confidence).toBeLessThan(0.45);
  });

  it('reads a bounded sample of a huge text: at most three windows of at most 1,000 characters', () => {
    const huge = SAMPLES.en.repeat(25_000); // ~5.5 MB
    const windows = sampleWindows(huge);
    expect(windows).toHaveLength(3);
    for (const window of windows) expect(window.length).toBeLessThanOrEqual(1000);
    expect(sampleWindows(SAMPLES.de)).toEqual([SAMPLES.de]);
  });
});

describe('DETECTABLE_LANGUAGES', () => {
  it("is exactly the list of eld's small database", async () => {
    const { eld } = await import('eld/small');
    const known = Object.values(eld.info().Languages as Record<string, string>);
    expect([...DETECTABLE_LANGUAGES].sort()).toEqual([...known].sort());
  });
});

describe('normalizeLanguageTag', () => {
  it('reduces declared tags to ISO 639-1', () => {
    const cases: Array<[string | undefined | null, string | undefined]> = [
      ['en-US', 'en'],
      ['EN_gb', 'en'],
      ['zh-Hans-CN', 'zh'],
      ['pt-BR', 'pt'],
      ['de', 'de'],
      ['iw', 'he'],
      ['in', 'id'],
      ['nb-NO', 'no'],
      ['fil', 'tl'],
      ['deu', 'de'],
      ['fr-CA, en;q=0.5', 'fr'],
      [' ja ', 'ja'],
    ];
    for (const [tag, want] of cases) expect(normalizeLanguageTag(tag), String(tag)).toBe(want);
  });

  it('names no language for empty, undetermined or malformed tags', () => {
    for (const tag of [undefined, null, '', 'und', 'mul', 'zxx', 'x-default', '*', '123', 'english', 'e']) {
      expect(normalizeLanguageTag(tag), String(tag)).toBeUndefined();
    }
  });
});

describe('parseLanguageList', () => {
  it('normalises and de-duplicates codes', () => {
    expect(parseLanguageList('en, de,EN-us,pt_BR')).toEqual(['en', 'de', 'pt']);
    expect(parseLanguageList('id')).toEqual(['id']);
  });

  it('refuses an empty list, a non-code and a language the detector cannot recognise', () => {
    expect(() => parseLanguageList('')).toThrow(LanguageListError);
    expect(() => parseLanguageList(' , ')).toThrow(/one or more language codes/);
    expect(() => parseLanguageList('en,english')).toThrow(/"english" is not a language code/);
    expect(() => parseLanguageList('ga')).toThrow(/cannot recognise "ga"/);
    expect(DETECTABLE_LANGUAGES).not.toContain('ga');
  });
});

describe('languageVerdict', () => {
  it('flags nothing when no languages are required', () => {
    expect(languageVerdict({ declared: 'fr', detected: { lang: 'fr', confidence: 1 } })).toEqual({
      lang: 'fr',
      source: 'detected',
    });
    expect(languageVerdict({ declared: 'fr', allowed: [] })).toEqual({ lang: 'fr', source: 'declared' });
  });

  it('trusts detection over the declaration and names both in the reason', () => {
    const verdict = languageVerdict({
      declared: 'en-US',
      detected: { lang: 'fr', confidence: 0.93 },
      allowed: ['en', 'de'],
    });
    expect(verdict).toMatchObject({ lang: 'fr', source: 'detected', flag: 'wrong-language' });
    expect(verdict.reason).toBe('detected fr (confidence 0.93), declared en; allowed: en,de');
    expect(
      languageVerdict({ declared: 'fr', detected: { lang: 'de', confidence: 1 }, allowed: ['de'] }).flag,
    ).toBeUndefined();
  });

  it('falls back to the declaration when detection had no answer, and keeps a page known either way', () => {
    const unsure = { lang: undefined, confidence: 0.3 };
    expect(languageVerdict({ declared: 'ru', detected: unsure, allowed: ['en'] })).toMatchObject({
      lang: 'ru',
      source: 'declared',
      flag: 'wrong-language',
      reason: 'declared ru, not detected; allowed: en',
    });
    expect(languageVerdict({ declared: 'x-default', detected: unsure, allowed: ['en'] })).toEqual({
      lang: undefined,
      source: 'none',
    });
  });

  it('accepts Malay for Indonesian, which the detector cannot tell apart', () => {
    expect(
      languageVerdict({ detected: { lang: 'ms', confidence: 1 }, allowed: ['id'] }).flag,
    ).toBeUndefined();
    expect(languageVerdict({ detected: { lang: 'ms', confidence: 1 }, allowed: ['en'] }).flag).toBe(
      'wrong-language',
    );
  });
});
