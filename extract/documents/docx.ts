/**
 * DOCX → HTML with mammoth (Word's paragraph styles become headings and lists) → the project's own
 * HTML → Markdown path (`normalizeContent` + `toMarkdown`, turndown), so a DOCX reads like an
 * extracted web page. The whole converted body is the content: a document has no site chrome.
 */
import { zipEntries } from '../../domain/zip-entries';
import { blockText } from '../candidate';
import { parseDocument } from '../dom';
import { normalizeContent, toMarkdown } from '../markdown';
import { collectLinks, documentMetadata, documentName, shortFirstLine } from './common';
import { coreProperties } from './docx-core-properties';
import { type ConvertOptions, DEFAULT_CONVERT_OPTIONS, type DocumentResult, failure } from './types';
import { inflatedSizeProblem } from './zip-inflated-sizes';

type Mammoth = typeof import('mammoth');
let mammothModule: Promise<Mammoth> | undefined;
/**
 * mammoth (with its zip and XML libraries) costs ~75 ms of CPU to load: loaded on the first DOCX, not
 * in every page-analysis thread that starts (and restarts after a page's deadline) on an HTML site.
 */
function loadMammoth(): Promise<Mammoth> {
  mammothModule ??= import('mammoth');
  return mammothModule;
}

/** Unpacked size a DOCX may declare (its XML parts); a zip bomb stops here before mammoth inflates it. */
export const MAX_DOCX_UNPACKED_BYTES = 200 * 1024 * 1024;

/** Class mammoth gives the heading made from Word's Title style. */
const TITLE_CLASS = 'docx-title';
/** Word's own title styles become headings too (mammoth maps only "Heading N" by default). */
const STYLE_MAP = [`p[style-name='Title'] => h1.${TITLE_CLASS}:fresh`, "p[style-name='Subtitle'] => p:fresh"];

export async function convertDocx(
  bytes: Uint8Array,
  url: string | undefined,
  options: ConvertOptions = {},
): Promise<DocumentResult> {
  // The sizes the central directory declares; a ZIP64 marker reads as Infinity, over any cap.
  const listing = zipEntries(bytes);
  if (!listing.ok) return failure('docx-broken', `DOCX is not a readable ZIP archive: ${listing.detail}`);
  const unpacked = listing.entries.reduce((total, entry) => total + entry.uncompressedBytes, 0);
  if (unpacked > MAX_DOCX_UNPACKED_BYTES)
    return failure(
      'docx-broken',
      `DOCX unpacks to ${unpacked} bytes, over the ${MAX_DOCX_UNPACKED_BYTES} cap`,
    );
  // The cap above trusts the declared sizes; a forged archive is caught here before JSZip inflates it.
  const forged = await inflatedSizeProblem(bytes, listing.entries);
  if (forged) return failure('docx-broken', `DOCX does not unpack as its directory declares: ${forged}`);

  let html: string;
  try {
    const mammoth = await loadMammoth();
    const result = await mammoth.convertToHtml(
      { buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) },
      {
        styleMap: STYLE_MAP,
        ignoreEmptyParagraphs: true,
        // Images would arrive as base64 data URIs; the corpus keeps text.
        convertImage: mammoth.images.imgElement(async () => ({ src: '' })),
      },
    );
    html = result.value;
  } catch (error) {
    const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
    return failure('docx-broken', `DOCX could not be read: ${message}`);
  }
  const maxChars = options.maxInputChars ?? DEFAULT_CONVERT_OPTIONS.maxInputChars;
  const cut = html.length > maxChars;

  const doc = parseDocument(
    `<!DOCTYPE html><html><body>${cut ? html.slice(0, maxChars) : html}</body></html>`,
    url,
    'linkedom',
  );
  const body = doc.body;
  for (const img of Array.from(body.querySelectorAll('img'))) img.remove();
  // Mammoth marks bookmarks with empty anchors; they carry no text or link.
  for (const anchor of Array.from(body.querySelectorAll('a[id]:not([href])'))) anchor.remove();
  // Mammoth ends each footnote and endnote with a "↑" link back to its reference: a word in no one's
  // text, in every chunk that holds a note.
  for (const back of Array.from(body.querySelectorAll('a[href^="#footnote-ref-"], a[href^="#endnote-ref-"]')))
    back.remove();
  const properties = coreProperties(bytes, listing.entries);
  const headingText = (el: Element | null) => el?.textContent?.replace(/\s+/g, ' ').trim() || undefined;
  const h1s = Array.from(body.querySelectorAll('h1'));
  const titled = body.querySelector(`h1.${TITLE_CLASS}`) !== null;
  const top = titled || h1s.length < 2 ? undefined : (properties.title ?? documentName(url));
  const heading = top ?? headingText(h1s[0] ?? null);
  nestUnder(body, top);
  // Footnote and bookmark references (`#footnote-1`) point inside the document: no outgoing link, as
  // for `#` links in HTML. Picked out before normalizeContent makes every href absolute.
  const internal = new Set(body.querySelectorAll('a[href^="#"]'));
  normalizeContent(body, url, undefined);
  const links = collectLinks(
    Array.from(body.querySelectorAll('a[href]'))
      .filter((a) => !internal.has(a))
      .map((a) => ({ href: a.getAttribute('href') ?? '', text: a.textContent ?? '' })),
    url,
  );
  const text = blockText(body);
  const markdown = toMarkdown(body);
  const title = heading ?? properties.title ?? shortFirstLine(text) ?? '';
  return {
    ok: true,
    document: {
      sourceType: 'docx',
      title,
      text,
      markdown,
      metadata: documentMetadata({ title: title || undefined, author: properties.author }, text),
      confidence: text === '' ? 0 : 1,
      strategy: 'document:docx',
      links,
      ...(cut
        ? { truncated: { reason: 'max-input-chars', detail: `first ${maxChars} characters of HTML kept` } }
        : {}),
    },
  };
}

/**
 * A Word document with a Title paragraph has its sections under it: Heading 1 is the title's child,
 * not its sibling. mammoth makes both `h1`, and the normaliser (one H1, later H1s become H2) would
 * then put Heading 1 and Heading 2 on one level, losing every heading path below the top. So with a
 * Title, each other heading moves one level down (h6 stays h6), the title staying the only H1.
 *
 * A document with no Title but several Heading 1s (chapters) loses the same way: there every heading
 * moves down and `top` (the document's own title, else its file name) becomes the H1 over them.
 */
function nestUnder(body: Element, top: string | undefined): void {
  const title = body.querySelector(`h1.${TITLE_CLASS}`);
  if (!title && top === undefined) return;
  const doc = body.ownerDocument;
  for (const heading of Array.from(body.querySelectorAll('h1, h2, h3, h4, h5'))) {
    if (heading === title) continue;
    const level = Number(heading.tagName.slice(1));
    const moved = doc.createElement(`h${level + 1}`);
    while (heading.firstChild) moved.appendChild(heading.firstChild);
    heading.replaceWith(moved);
  }
  if (title) title.removeAttribute('class');
  else {
    const h1 = doc.createElement('h1');
    h1.textContent = top ?? '';
    body.insertBefore(h1, body.firstChild);
  }
}
