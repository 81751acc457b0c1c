/**
 * Document converters on real documents made by real writers (test/fixtures/documents/README.md says
 * how each was made): a sentence from the middle survives, headings are where the source has them,
 * PDF page numbers are right, and bad input (encrypted, broken, image-only, oversized, binary
 * garbage) comes back as a named failure in bounded time, never a throw.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { chunkMarkdown } from '../../domain/chunking';
import {
  type ConvertedDocument,
  type ConvertOptions,
  convertDocument,
  type DocumentResult,
  type DocumentType,
  documentTypeOf,
  pagesOfLines,
} from '../../extract/documents';
import { linesOf } from '../../extract/documents/pdf-layout';
import { headingAnchors } from '../../extract/normalize-markdown';
import { zip } from '../../testbed/zip-archive';

const FIXTURES = path.join(import.meta.dirname, '../fixtures/documents');
const BASE = 'http://127.0.0.1:8080/docs/';
const DOCX_MIME = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

function fixture(name: string): Buffer {
  return readFileSync(path.join(FIXTURES, name));
}

async function convert(
  name: string,
  type: DocumentType,
  options: ConvertOptions = {},
): Promise<DocumentResult> {
  return convertDocument(fixture(name), type, BASE + name, options);
}

async function converted(
  name: string,
  type: DocumentType,
  options: ConvertOptions = {},
): Promise<ConvertedDocument> {
  const result = await convert(name, type, options);
  if (!result.ok) throw new Error(`${name}: ${result.failure.reason}: ${result.failure.message}`);
  return result.document;
}

const headings = (markdown: string) =>
  headingAnchors(markdown).map((h) => `${'#'.repeat(h.level)} ${h.text}`);

/** Chunks of a converted document, small enough that each section is its own chunk. */
function chunksOf(document: ConvertedDocument) {
  return chunkMarkdown(document.markdown, {
    countTokens: (text) => text.split(/\s+/).filter(Boolean).length,
    targetTokens: 60,
    minTokens: 10,
    maxTokens: 120,
  });
}

describe('documentTypeOf', () => {
  it.each([
    ['application/pdf', 'guide.pdf', 'pdf'],
    ['application/pdf; charset=binary', 'download?id=3', 'pdf'],
    [DOCX_MIME, 'report', 'docx'],
    ['text/markdown; charset=utf-8', 'notes', 'markdown'],
    ['text/plain', 'README.md', 'markdown'],
    ['text/plain; charset=utf-8', 'CHANGELOG.markdown', 'markdown'],
    ['text/plain', 'notes.txt', 'text'],
    ['text/plain', 'LICENSE', 'text'],
    ['application/octet-stream', 'manual.pdf', 'pdf'],
    ['application/octet-stream', 'manual.docx', 'docx'],
    ['text/html', 'index.html', undefined],
    ['text/html', 'README.md', undefined],
    ['image/png', 'scan.pdf', undefined],
    [undefined, 'blob', undefined],
  ])('%s at %s → %s', (contentType, file, expected) => {
    expect(documentTypeOf(contentType, BASE + file)).toBe(expected);
  });
});

describe('PDF (printed by Chromium)', () => {
  it('keeps the text, rebuilds headings from font sizes, and says where each page starts', async () => {
    const doc = await converted('field-guide.pdf', 'pdf');
    expect(doc.sourceType).toBe('pdf');
    expect(doc.title).toBe('Field Guide to Garden Beetles');
    expect(doc.metadata.language).toBe('en');
    expect(doc.pageCount).toBe(2);
    // A sentence from the middle, one paragraph though it spans three printed lines.
    expect(doc.text).toContain(
      'The violet ground beetle has a purple sheen along the edges of its wing cases that shows only in low sunlight.',
    );
    expect(headings(doc.markdown)).toEqual([
      '# Field Guide to Garden Beetles',
      '## Ground beetles',
      '### The violet ground beetle',
      '## Leaf beetles',
      '### The lily beetle',
      '## Ladybirds',
    ]);
    const lines = doc.markdown.split('\n');
    expect(doc.pageStarts).toEqual([
      { page: 1, line: 1 },
      { page: 2, line: lines.indexOf('## Leaf beetles') + 1 },
    ]);
  });

  it('joins a word Chromium broke at a soft hyphen (drawn as U+2010) across two lines', async () => {
    const doc = await converted('soft-hyphens.pdf', 'pdf');
    expect(doc.text).toContain(
      'Clay soils hold water; their drainage improves with compost, and earthworms follow the improvement within a season or two.',
    );
  });

  it('reads Arabic and Hebrew in reading order and as letters, not as shaped glyphs drawn left to right', async () => {
    const doc = await converted('bidi-notes.pdf', 'pdf');
    expect(doc.title).toBe('ملاحظات الحديقة');
    expect(headings(doc.markdown)).toEqual(['# ملاحظات الحديقة', '## עברית']);
    expect(doc.text).toContain(
      'تحتاج الطماطم إلى الشمس والماء كل يوم في الصيف، وتنضج بعد 75 يوما من الزراعة في تربة محايدة.',
    );
    expect(doc.text).toContain('وجرّب السماد من نوع NPK مرة في الشهر.');
    expect(doc.text).toContain('העגבניות צריכות שמש ומים בכל יום בקיץ, במיוחד ביולי 2024.');
    expect(doc.text).toContain('An English paragraph between them stays as it was written.');
    // Arabic presentation forms (the shaped glyphs) match no word a reader types.
    expect(doc.markdown).not.toMatch(/[\ufb50-\ufdff\ufe70-\ufeff]/);
    expect(doc.links).toEqual([
      expect.objectContaining({ url: 'https://example.org/soil', anchorText: 'دليل التربة' }),
    ]);
    expect(doc.markdown).toContain('اقرأ [دليل التربة](https://example.org/soil) قبل الزراعة');
  });

  it('reads a right-to-left line the same whether its glyphs are drawn left to right or in reading order', () => {
    // "שלום עולם 2024." set glyph by glyph, 6 pt apart, ending at x = 300.
    const logical = [...'שלום עולם'];
    const visual = ['.', ...'2024', ' ', ...[...logical].reverse()];
    const runsAt = (chars: string[], order: 'leftToRight' | 'readingOrder') => {
      const runs = chars.map((str, i) => ({
        str,
        x: 300 - (chars.length - i) * 6,
        y: 700,
        size: 11,
        width: 6,
        hasEOL: false,
      }));
      return order === 'leftToRight' ? runs : [...runs].reverse();
    };
    const textOf = (runs: ReturnType<typeof runsAt>) =>
      linesOf(runs, []).map((line) => line.segments.map((segment) => segment.text).join(''));
    expect(textOf(runsAt(visual, 'leftToRight'))).toEqual(['שלום עולם 2024.']);
    expect(textOf(runsAt(visual, 'readingOrder'))).toEqual(['שלום עולם 2024.']);
  });

  it('keeps a table as a GFM table (empty header row, as the HTML path) and reads its rows as text', async () => {
    const doc = await converted('orchard-chapters.pdf', 'pdf');
    expect(doc.markdown).toContain(
      [
        '|  |  |',
        '| --- | --- |',
        '| Month | Task |',
        '| May | Thin the fruit to one per cluster |',
        '| June | Summer prune |',
      ].join('\n'),
    );
    expect(doc.text).toContain('May Thin the fruit to one per cluster\nJune Summer prune');
    expect(doc.text).not.toContain('|');
    // Running text never becomes a table.
    for (const name of ['field-guide.pdf', 'soft-hyphens.pdf', 'bidi-notes.pdf'])
      expect((await converted(name, 'pdf')).markdown).not.toMatch(/^\|/m);
  });

  it("keeps each chapter's sections under it when chapters are set in the largest heading size", async () => {
    const doc = await converted('orchard-chapters.pdf', 'pdf');
    expect(doc.title).toBe('Orchard Manual');
    expect(headings(doc.markdown)).toEqual([
      '# Orchard Manual',
      '## Pruning',
      '### Tools',
      '## Feeding',
      '### Compost',
    ]);
    const compost = chunkMarkdown(doc.markdown, {
      countTokens: (text) => text.split(/\s+/).filter(Boolean).length,
      targetTokens: 10,
      minTokens: 2,
      maxTokens: 25,
    }).find((chunk) => chunk.text.includes('Two barrows'));
    expect(compost?.headingPath).toEqual(['Orchard Manual', 'Feeding', 'Compost']);
    expect(compost && pagesOfLines(doc.pageStarts ?? [], compost.startLine, compost.endLine)).toEqual({
      first: 1,
      last: 1,
    });
  });

  it('gives chunks the pages they came from', async () => {
    const doc = await converted('field-guide.pdf', 'pdf');
    const pageOf = (needle: string) => {
      const chunk = chunksOf(doc).find((c) => c.text.includes(needle));
      if (!chunk) throw new Error(`no chunk holds ${needle}`);
      return pagesOfLines(doc.pageStarts ?? [], chunk.startLine, chunk.endLine);
    };
    expect(pageOf('purple sheen')).toEqual({ first: 1, last: 1 });
    expect(pageOf('squeaks when it is picked up')).toEqual({ first: 2, last: 2 });
    expect(pageOf('four hundred aphids')).toEqual({ first: 2, last: 2 });
  });

  it('turns link annotations into Markdown links and outgoing links', async () => {
    const doc = await converted('field-guide.pdf', 'pdf');
    expect(doc.links).toEqual([
      expect.objectContaining({
        url: 'https://beetles.example.org/habitats',
        anchorText: 'habitats page of the beetle society',
      }),
    ]);
    expect(doc.markdown).toContain(
      '[habitats page of the beetle society](https://beetles.example.org/habitats), which lists the soils',
    );
  });

  it('drops the running header and footer Chromium prints on every page', async () => {
    const plain = await converted('field-guide.pdf', 'pdf');
    const printed = await converted('field-guide-with-header.pdf', 'pdf');
    expect(printed.markdown).not.toContain('file:///tmp/field-guide.html');
    expect(printed.markdown).not.toMatch(/\d+\/2$/m);
    expect(printed.markdown).toBe(plain.markdown);
    expect(printed.pageStarts).toEqual(plain.pageStarts);
  });

  it('stops at the page cap, keeping the pages before it', async () => {
    const capped = await converted('long-report.pdf', 'pdf', { maxPdfPages: 5 });
    expect(capped.text).toContain('This is page 5 of the long report.');
    expect(capped.text).not.toContain('This is page 6 of');
    expect(capped.pageCount).toBe(40);
    expect(capped.pageStarts?.map((start) => start.page)).toEqual([1, 2, 3, 4, 5]);
    expect(capped.truncated).toEqual({ reason: 'pdf-page-cap', detail: 'first 5 of 40 pages read' });

    const whole = await converted('long-report.pdf', 'pdf');
    expect(whole.text).toContain('This is page 40 of the long report.');
    expect(whole.truncated).toBeUndefined();
  });

  it('stops at the time cap with a named reason', async () => {
    const result = await convert('long-report.pdf', 'pdf', { pdfTimeMs: 1 });
    if (result.ok) {
      expect(result.document.truncated?.reason).toBe('pdf-time-cap');
      expect(result.document.pageStarts?.length).toBeLessThan(40);
    } else {
      expect(result.failure.reason).toBe('pdf-timeout');
    }
  });

  it.each([
    ['encrypted.pdf', 'pdf-encrypted'],
    ['broken.pdf', 'pdf-broken'],
    ['scanned-note.pdf', 'pdf-no-text'],
  ])('%s → %s', async (name, reason) => {
    const result = await convert(name, 'pdf');
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.failure.reason).toBe(reason);
      expect(result.failure.message).not.toContain('\n');
    }
  });
});

describe('Markdown', () => {
  it('keeps Markdown, parses front matter, normalises headings and resolves links', async () => {
    const doc = await converted('pond-care.md', 'markdown');
    expect(doc.title).toBe('Looking After a Wildlife Pond');
    expect(doc.metadata).toMatchObject({
      author: 'Gleaner Test Suite',
      description: 'Seasonal care for a small garden pond, written for the gleaner tests.',
      published: '2026-03-14T00:00:00.000Z',
      language: 'en',
    });
    expect(doc.frontMatter?.tags).toEqual(['ponds', 'wildlife', 'seasons']);
    expect(doc.markdown).not.toContain('tags:');
    expect(doc.text).toContain(
      'Topping up with rainwater rather than tap water keeps the nutrient level low, and low nutrients mean',
    );
    expect(headings(doc.markdown)).toEqual([
      '# Looking After a Wildlife Pond',
      '## Spring',
      '## Summer',
      '## Setext headings are normalised too',
      '## Winter',
    ]);
    // The `#` line inside the fence is code, kept as it is.
    expect(doc.markdown).toContain('```sh\n# not a heading: a comment inside a code block\n');
    // Trailing spaces gone.
    expect(doc.markdown).not.toMatch(/[ \t]$/m);
    expect(doc.links.map((link) => link.url)).toEqual([
      'http://127.0.0.1:8080/calendars/amphibians.md',
      'https://ponds.example.org/survey',
      'http://127.0.0.1:8080/docs/winter-notes.md',
    ]);
    expect(doc.markdown).toContain('[amphibian calendar](http://127.0.0.1:8080/calendars/amphibians.md)');
  });

  it('takes the title from the first # heading without front matter, and CRLF becomes LF', async () => {
    const source = '# Compost Notes\r\n\r\nTurn the heap every [two weeks](schedule.md).\r\n';
    const result = await convertDocument(Buffer.from(source), 'markdown', `${BASE}compost.md`);
    if (!result.ok) throw new Error(result.failure.message);
    expect(result.document.title).toBe('Compost Notes');
    expect(result.document.markdown).toBe(
      '# Compost Notes\n\nTurn the heap every [two weeks](http://127.0.0.1:8080/docs/schedule.md).',
    );
  });

  it('reads raw HTML in Markdown as markup: tags go, words stay, code keeps every character', async () => {
    const source = [
      '# Pond notes',
      '',
      '<div class="warning">Do <b>not</b> overfeed the fish.</div>',
      '',
      'Keep `<b>this</b>` as code, a<br>line break and <!-- a hidden note --> the rest.',
      '',
      '```html',
      '<p>fenced</p>',
      '```',
      '',
    ].join('\n');
    const result = await convertDocument(Buffer.from(source), 'markdown', `${BASE}pond.md`);
    if (!result.ok) throw new Error(result.failure.message);
    const { markdown, text } = result.document;
    expect(markdown).toContain('\nDo not overfeed the fish.\n');
    expect(text).toContain('Do not overfeed the fish.');
    expect(text).not.toMatch(/\\|<div|<b>not|hidden note/);
    expect(markdown).toContain('Keep `<b>this</b>` as code, a line break and');
    expect(markdown).toContain('```html\n<p>fenced</p>\n```');
  });

  it('keeps autolinks as links, and code spans as written', async () => {
    const source = [
      '# Pond links',
      '',
      'The society is at <https://ponds.example.org/join> and answers <help@ponds.example.org>.',
      '',
      'Write it as `<https://not.a.link/>` in a code span.',
      '',
    ].join('\n');
    const result = await convertDocument(Buffer.from(source), 'markdown', `${BASE}links.md`);
    if (!result.ok) throw new Error(result.failure.message);
    const { markdown, text, links } = result.document;
    expect(markdown).toContain(
      'The society is at [https://ponds.example.org/join](https://ponds.example.org/join) and answers [help@ponds.example.org](mailto:help@ponds.example.org).',
    );
    expect(text).toContain(
      'The society is at https://ponds.example.org/join and answers help@ponds.example.org.',
    );
    expect(markdown).toContain('Write it as `<https://not.a.link/>` in a code span.');
    expect(links.map((link) => link.url)).toEqual(['https://ponds.example.org/join']);
  });

  it('drops HTML comments, scripts and styles that run over several lines, words and all', async () => {
    const source = [
      '# Pond notes',
      '',
      'Before the comment. <!-- a note',
      'for the editors only',
      'until here --> After the comment.',
      '',
      '<!--',
      'A whole hidden paragraph.',
      '-->',
      '',
      '<script>',
      'var tracking = "pond-visitor";',
      '</script>',
      '',
      '<style type="text/css">',
      '.badge { colour: green; }',
      '</STYLE>',
      '',
      'The last paragraph.',
      '',
    ].join('\n');
    const result = await convertDocument(Buffer.from(source), 'markdown', `${BASE}pond.md`);
    if (!result.ok) throw new Error(result.failure.message);
    const { markdown, text } = result.document;
    expect(text).not.toMatch(/editors|hidden|<!--|-->|tracking|badge|script|style/i);
    expect(markdown).toContain('Before the comment.');
    expect(markdown).toContain('After the comment.');
    expect(markdown).toContain('The last paragraph.');
  });

  it('reads front matter safely: no code tags run, alias bombs are refused, the body stays', async () => {
    const hostile = [
      '---',
      'title: !!js/function "function () { globalThis.gleanerPwned = true }"',
      'a: &a ["x","x","x","x","x","x","x","x","x","x"]',
      'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]',
      'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]',
      'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]',
      'e: [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]',
      '---',
      '',
      'The body survives hostile front matter.',
    ].join('\n');
    const started = performance.now();
    const result = await convertDocument(Buffer.from(hostile), 'markdown', `${BASE}hostile.md`);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect((globalThis as { gleanerPwned?: boolean }).gleanerPwned).toBeUndefined();
    if (!result.ok) throw new Error(result.failure.message);
    expect(result.document.text).toContain('The body survives hostile front matter.');
    expect(result.document.markdown).not.toContain('&a');
  });
});

describe('plain text', () => {
  it('splits paragraphs at blank lines and invents no headings', async () => {
    const doc = await converted('seed-catalogue.txt', 'text');
    expect(doc.title).toBe('Release notes for the seed catalogue');
    expect(doc.text).toContain(
      'The middle paragraph: orders placed before the end of February ship in the first week of March, while later orders wait',
    );
    expect(headings(doc.markdown)).toEqual([]);
    expect(doc.markdown).not.toContain('\r');
    expect(doc.markdown.split('\n\n')).toHaveLength(5);
    expect(doc.links.map((link) => link.url)).toEqual(['https://seeds.example.org/desk']);
  });

  const MENU =
    'The crème brûlée costs 5 € and the naïve soufflé is “excellent” — try it with a café au lait.';

  // The fetch path hands the converter the charset it resolved: the header's, else `utf-8`.
  it.each([
    ['windows-1252 declared', 'windows-1252'],
    ['iso-8859-1 declared (a windows-1252 label)', 'iso-8859-1'],
    ['nothing declared (the fetch reports utf-8)', 'utf-8'],
  ])('reads a windows-1252 text file, %s: € “ ” — survive', async (_name, charset) => {
    const doc = await converted('cafe-menu-cp1252.txt', 'text', { charset });
    expect(doc.text).toContain(MENU);
    expect(doc.markdown).toContain(MENU);
  });

  it('keeps valid UTF-8 as UTF-8 (no windows-1252 fallback for a real UTF-8 body)', async () => {
    const bytes = Buffer.from(`Plain words.\n\n${MENU}\n`, 'utf8');
    const result = await convertDocument(bytes, 'text', BASE, { charset: 'utf-8' });
    expect(result.ok && result.document.text).toContain(MENU);
  });

  it('reads Shift_JIS when declared, and names the missing charset rather than "binary" when not', async () => {
    // "庭の手入れ\n\n毎朝、水をやります。\n" in Shift_JIS (Python's str.encode('shift_jis')).
    const sjis = Buffer.from('92eb82cc8ee893fc82ea0a0a968892a98141908582f082e282e882dc82b781420a', 'hex');
    const declared = await convertDocument(sjis, 'text', `${BASE}garden.txt`, { charset: 'shift_jis' });
    expect(declared.ok && declared.document.text).toBe('庭の手入れ\n\n毎朝、水をやります。');
    for (const charset of [undefined, 'utf-8']) {
      const result = await convertDocument(sjis, 'text', `${BASE}garden.txt`, { charset });
      expect(result).toEqual({
        ok: false,
        failure: {
          reason: 'not-text',
          message:
            'a text response is not UTF-8 and names no other charset (a legacy encoding the server did not declare, or binary data)',
        },
      });
    }
  });

  it('reads UTF-16LE without a BOM when the response declares it', async () => {
    const doc = await converted('cafe-menu-utf16le.txt', 'text', { charset: 'utf-16le' });
    expect(doc.title).toBe('Cafe menu for the spring fair');
    expect(doc.text).toContain(MENU);
  });
});

describe('DOCX (written by pandoc)', () => {
  it('keeps headings, lists and links through mammoth and the HTML → Markdown path', async () => {
    const doc = await converted('greenhouse-handbook.docx', 'docx');
    expect(doc.title).toBe('Greenhouse Handbook');
    expect(doc.text).toContain(
      'Open the roof vents whenever the inside temperature passes twenty-five degrees, even in April',
    );
    expect(headings(doc.markdown)).toEqual([
      '# Greenhouse Handbook',
      '## Ventilation',
      '## Watering',
      '## Further reading',
    ]);
    expect(doc.markdown).toMatch(
      /^- +Use water that has stood in the greenhouse overnight, so it is not cold\.$/m,
    );
    expect(doc.links).toEqual([
      expect.objectContaining({
        url: 'https://greenhouse.example.org/forum',
        anchorText: "greenhouse growers' forum",
      }),
    ]);
  });
});

describe('DOCX (WordprocessingML written by hand)', () => {
  it('nests Heading 1 and Heading 2 under the Title, so chunks keep their heading paths', async () => {
    const doc = await converted('beekeeping-notes.docx', 'docx');
    expect(doc.title).toBe('Beekeeping Basics');
    expect(headings(doc.markdown)).toEqual([
      '# Beekeeping Basics',
      '## Hive inspection',
      '### Equipment',
      '## Harvest',
    ]);
    // Small chunks, so the Equipment section is a chunk of its own.
    const chunks = chunkMarkdown(doc.markdown, {
      countTokens: (text) => text.split(/\s+/).filter(Boolean).length,
      targetTokens: 15,
      minTokens: 3,
      maxTokens: 30,
    });
    const equipment = chunks.find((chunk) => chunk.text.includes('Hive tool'));
    expect(equipment?.headingPath).toEqual(['Beekeeping Basics', 'Hive inspection', 'Equipment']);
  });

  it('keeps tracked insertions, drops deletions, and records no self-links for footnotes', async () => {
    const doc = await converted('beekeeping-notes.docx', 'docx');
    expect(doc.text).toContain('Feed sugar syrup in autumn only.');
    expect(doc.text).not.toContain('spring');
    expect(doc.text).toContain('Varroa destructor, an external parasitic mite.');
    // mammoth's "↑" link from each note back to its reference is no word of the document.
    expect(doc.markdown).not.toContain('↑');
    expect(doc.links).toEqual([]);
  });
});

describe('no NUL reaches the store (Postgres text refuses U+0000 and the page write fails)', () => {
  const hasNul = (value: unknown) => JSON.stringify(value).includes('\\u0000');

  it('drops the NULs pdf.js gives for glyphs the printing font lacked, keeping the rest of the line', async () => {
    const doc = await converted('missing-glyphs.pdf', 'pdf');
    expect(hasNul(doc)).toBe(false);
    expect(doc.text).toMatch(/The label reads\s+in the shop window\./);
    expect(doc.text).toContain('Black tea takes boiling water and four minutes.');
  });

  it('drops a NUL that lies past the sniffed head of a text or Markdown body', async () => {
    const body = Buffer.concat([
      Buffer.from(`Long notes\n\n${'filler words for the head. '.repeat(400)}\n\nA late `),
      Buffer.from([0]),
      Buffer.from('paragraph with a NUL in it.\n'),
    ]);
    for (const type of ['text', 'markdown'] as const) {
      const result = await convertDocument(body, type, `${BASE}notes`);
      if (!result.ok) throw new Error(result.failure.message);
      expect(hasNul(result.document)).toBe(false);
      expect(result.document.text).toContain('A late paragraph with a NUL in it.');
    }
  });

  it('drops a NUL written as an escape in front matter', async () => {
    const source = '---\ntitle: "Pond\\0 notes"\nauthor: "A\\0B"\n---\n\nThe body of the notes.\n';
    const result = await convertDocument(Buffer.from(source), 'markdown', `${BASE}pond.md`);
    if (!result.ok) throw new Error(result.failure.message);
    expect(hasNul(result.document)).toBe(false);
    expect(result.document.title).toBe('Pond notes');
  });
});

const WORD_NS = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
const CONTENT_TYPES =
  '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
  '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
  '<Default Extension="xml" ContentType="application/xml"/>' +
  '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>';
const RELS =
  '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
  '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>';

describe('DOCX with chapters (several Heading 1s, no Title), written by the test', () => {
  const para = (text: string, style?: string) =>
    `<w:p>${style ? `<w:pPr><w:pStyle w:val="${style}"/></w:pPr>` : ''}<w:r><w:t>${text}</w:t></w:r></w:p>`;
  const styles =
    `<?xml version="1.0" encoding="UTF-8"?><w:styles xmlns:w="${WORD_NS}">` +
    '<w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/></w:style>' +
    '<w:style w:type="paragraph" w:styleId="Heading2"><w:name w:val="heading 2"/></w:style></w:styles>';
  const documentXml =
    `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="${WORD_NS}"><w:body>` +
    para('Pruning', 'Heading1') +
    para('Prune apple trees in winter, when the sap is down.') +
    para('Tools', 'Heading2') +
    para('A sharp pruning saw and clean loppers.') +
    para('Feeding', 'Heading1') +
    para('Feed the orchard once in early spring.') +
    para('Compost', 'Heading2') +
    para('Two barrows of compost per tree, spread to the drip line.') +
    '</w:body></w:document>';
  const parts = {
    '[Content_Types].xml': CONTENT_TYPES,
    '_rels/.rels': RELS,
    'word/document.xml': documentXml,
    'word/_rels/document.xml.rels':
      '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
      '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/></Relationships>',
    'word/styles.xml': styles,
  };
  const core =
    '<?xml version="1.0" encoding="UTF-8"?><cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/">' +
    '<dc:title>Orchard Manual &amp; Calendar</dc:title><dc:creator>Ann Gardener</dc:creator></cp:coreProperties>';
  const compostPath = (doc: ConvertedDocument) =>
    chunkMarkdown(doc.markdown, {
      countTokens: (text) => text.split(/\s+/).filter(Boolean).length,
      targetTokens: 8,
      minTokens: 2,
      maxTokens: 20,
    }).find((chunk) => chunk.text.includes('Two barrows'))?.headingPath;

  it("keeps each chapter's sections under it, below the title the document declares", async () => {
    const result = await convertDocument(
      zip({ ...parts, 'docProps/core.xml': core }),
      'docx',
      `${BASE}manual.docx`,
    );
    if (!result.ok) throw new Error(result.failure.message);
    const doc = result.document;
    expect(doc.title).toBe('Orchard Manual & Calendar');
    expect(doc.metadata.author).toBe('Ann Gardener');
    expect(headings(doc.markdown)).toEqual([
      '# Orchard Manual & Calendar',
      '## Pruning',
      '### Tools',
      '## Feeding',
      '### Compost',
    ]);
    expect(compostPath(doc)).toEqual(['Orchard Manual & Calendar', 'Feeding', 'Compost']);
  });

  it('uses the file name as the top heading when the document declares no title', async () => {
    const result = await convertDocument(zip(parts), 'docx', `${BASE}orchard-manual.docx`);
    if (!result.ok) throw new Error(result.failure.message);
    expect(headings(result.document.markdown)).toEqual([
      '# orchard-manual',
      '## Pruning',
      '### Tools',
      '## Feeding',
      '### Compost',
    ]);
    expect(compostPath(result.document)).toEqual(['orchard-manual', 'Feeding', 'Compost']);
  });
});

describe('bad input', () => {
  // Built once, named in the table: vitest formats every `it.each` argument, and a 3 MB buffer in
  // the table costs minutes of formatting.
  const garbage = randomBytes(3_000_000);
  const inputs: Record<string, Buffer> = {
    'binary garbage': garbage,
    '%PDF- header over garbage': Buffer.concat([Buffer.from('%PDF-1.7\n'), garbage]),
    'no bytes': Buffer.alloc(0),
    'a PDF': fixture('field-guide.pdf'),
  };

  it.each([
    ['pdf', 'binary garbage', 'pdf-broken'],
    ['pdf', '%PDF- header over garbage', 'pdf-broken'],
    ['pdf', 'no bytes', 'pdf-broken'],
    ['docx', 'binary garbage', 'docx-broken'],
    ['docx', 'a PDF', 'docx-broken'],
    ['markdown', 'binary garbage', 'not-text'],
    ['text', '%PDF- header over garbage', 'not-text'],
  ] as const)('%s of %s → %s, in bounded time', async (type, input, reason) => {
    const started = performance.now();
    const result = await convertDocument(inputs[input] as Buffer, type, `${BASE}garbage`);
    // Generous: the machine is shared; the point is that it ends, and with a name.
    expect(performance.now() - started).toBeLessThan(30_000);
    expect(result).toMatchObject({ ok: false, failure: { reason } });
  });

  it('says a PDF with no pages has no text, rather than that its pages could not be read', async () => {
    // A valid PDF whose page tree is empty, with a correct cross-reference table.
    const objects = ['<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [] /Count 0 >>'];
    let body = '%PDF-1.4\n';
    const offsets = objects.map((object, i) => {
      const at = body.length;
      body += `${i + 1} 0 obj\n${object}\nendobj\n`;
      return at;
    });
    const xref = body.length;
    body += `xref\n0 3\n0000000000 65535 f \n${offsets.map((at) => `${String(at).padStart(10, '0')} 00000 n \n`).join('')}`;
    body += `trailer\n<< /Size 3 /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
    const result = await convertDocument(Buffer.from(body), 'pdf', `${BASE}empty.pdf`);
    expect(result).toEqual({ ok: false, failure: { reason: 'pdf-no-text', message: 'PDF has no pages' } });
  });

  it('cuts huge text at the input cap and says so', async () => {
    const huge = Buffer.from('A line of plain words that goes on.\n\n'.repeat(200_000));
    const started = performance.now();
    const result = await convertDocument(huge, 'text', `${BASE}huge.txt`, { maxInputChars: 1_000_000 });
    expect(performance.now() - started).toBeLessThan(30_000);
    if (!result.ok) throw new Error(result.failure.message);
    expect(result.document.truncated?.reason).toBe('max-input-chars');
    expect(result.document.text.length).toBeLessThanOrEqual(1_000_000);
  });

  it('refuses a DOCX whose entry unpacks to more than it declares, without unpacking it', async () => {
    // 50 MB of blanks deflate to ~50 KB; the directory says 1,000 bytes. JSZip inflated all of it
    // before noticing (the 10 MB body cap allows ~10 GB that way).
    const body = `<w:document xmlns:w="${WORD_NS}"><w:body><w:p><w:r><w:t>pond</w:t></w:r></w:p>`;
    const bomb = zip(
      {
        '[Content_Types].xml': CONTENT_TYPES,
        '_rels/.rels': RELS,
        'word/document.xml': Buffer.concat([
          Buffer.from(body),
          Buffer.alloc(50_000_000, ' '),
          Buffer.from('</w:body></w:document>'),
        ]),
      },
      { declaredUncompressed: { 'word/document.xml': 1_000 } },
    );
    expect(bomb.length).toBeLessThan(200_000);
    const result = await convertDocument(bomb, 'docx', `${BASE}forged.docx`);
    expect(result).toMatchObject({ ok: false, failure: { reason: 'docx-broken' } });
    if (!result.ok)
      expect(result.failure.message).toBe(
        'DOCX does not unpack as its directory declares: word/document.xml unpacks to more than the 1000 bytes it declares',
      );

    // The same archive declaring its true size is read.
    const honest = zip({
      '[Content_Types].xml': CONTENT_TYPES,
      '_rels/.rels': RELS,
      'word/document.xml': `${body}</w:body></w:document>`,
    });
    const read = await convertDocument(honest, 'docx', `${BASE}honest.docx`);
    if (!read.ok) throw new Error(read.failure.message);
    expect(read.document.text).toContain('pond');
  });

  it('refuses a DOCX whose archive declares more than the unpacked cap', async () => {
    // One central-directory entry declaring 4 GiB - 2 uncompressed; no data needed to be refused.
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt32LE(0xfffffffe, 24);
    const end = Buffer.alloc(22);
    end.writeUInt32LE(0x06054b50, 0);
    end.writeUInt16LE(1, 8);
    end.writeUInt16LE(1, 10);
    end.writeUInt32LE(46, 12);
    end.writeUInt32LE(0, 16);
    const result = await convertDocument(Buffer.concat([central, end]), 'docx', `${BASE}bomb.docx`);
    expect(result).toMatchObject({ ok: false, failure: { reason: 'docx-broken' } });
    if (!result.ok) expect(result.failure.message).toContain('over the');
  });
});
