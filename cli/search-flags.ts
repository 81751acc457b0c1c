/** Search parameters by the flags that set them, for error messages (`search` and `context`). */
export const SEARCH_FLAGS: Readonly<Record<string, string>> = {
  k: '--k',
  perPage: '--per-page',
  pathPrefix: '--prefix',
  crawlId: '--crawl',
  domain: '--domain',
  mode: '--mode',
  lang: '--lang',
  budgetTokens: '--budget',
};
