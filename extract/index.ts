/** The extraction pipeline's public surface: HTML → text, Markdown and metadata. */
export { DOM_KINDS, type DomKind } from './dom';
export {
  DEFAULT_CONTENT_SELECTORS,
  DEFAULT_EXTRACT_OPTIONS,
  type ExtractedPage,
  type ExtractOptions,
  extractPage,
} from './extract-page';
export type { PageMetadata } from './metadata';
