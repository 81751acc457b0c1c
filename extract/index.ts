/** The extraction pipeline's public surface: HTML → text, Markdown and metadata. */
export { type DomKind, DOM_KINDS } from './dom';
export {
  DEFAULT_CONTENT_SELECTORS,
  DEFAULT_EXTRACT_OPTIONS,
  type ExtractedPage,
  type ExtractOptions,
  extractPage,
} from './extract-page';
export type { PageMetadata } from './metadata';
