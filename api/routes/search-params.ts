/** Search parameters by their query-string names, for error messages (`/search` and `/context`). */
export const SEARCH_QUERY_PARAMS: Readonly<Record<string, string>> = {
  pathPrefix: 'prefix',
  crawlId: 'crawl',
  budgetTokens: 'budget',
};
