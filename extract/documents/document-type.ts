/**
 * Which converter a response needs, from its Content-Type and URL alone: no converter is loaded, so
 * the fetch path (which filters responses by the crawl's `contentTypes`) can ask without pulling in
 * pdf.js or mammoth.
 */
import type { DocumentType } from './types';

export const DOCX_MIME = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const MARKDOWN_MIMES = new Set(['text/markdown', 'text/x-markdown', 'text/x-gfm']);
const PDF_MIMES = new Set(['application/pdf', 'application/x-pdf']);
/** Extensions that make a `text/plain` (or generic binary) response a Markdown file. */
const MARKDOWN_PATH = /\.(?:md|markdown|mdown|mkd)$/i;

/**
 * The converter for a response, from its Content-Type (parameters ignored) and URL; undefined for
 * HTML (its own pipeline) and for types no converter reads. A `.md` URL served as `text/plain` is
 * Markdown (GitHub raw files and most static servers do this); a `.pdf` or `.docx` URL served as
 * `application/octet-stream` (S3's `binary/octet-stream`, or no type) is taken by its extension.
 */
export function documentTypeOf(contentType: string | undefined, url: string): DocumentType | undefined {
  const mime = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  let pathname = '';
  try {
    pathname = new URL(url).pathname;
  } catch {
    // An unparsable URL has no extension to go by.
  }
  if (PDF_MIMES.has(mime)) return 'pdf';
  if (mime === DOCX_MIME) return 'docx';
  if (MARKDOWN_MIMES.has(mime)) return 'markdown';
  if (mime === 'text/plain') return MARKDOWN_PATH.test(pathname) ? 'markdown' : 'text';
  if (mime === 'application/octet-stream' || mime === 'binary/octet-stream' || mime === '') {
    if (/\.pdf$/i.test(pathname)) return 'pdf';
    if (/\.docx$/i.test(pathname)) return 'docx';
    if (MARKDOWN_PATH.test(pathname)) return 'markdown';
  }
  return undefined;
}
