/** The output formats of `gleaner extract`, apart from the command so `--help` need not load extraction. */
export type ExtractFormat = 'markdown' | 'text' | 'json';
export const EXTRACT_FORMATS: readonly ExtractFormat[] = ['markdown', 'text', 'json'];
