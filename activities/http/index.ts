export { type DecodedBody, decodeBody } from './charset.ts';
export { BlockedUrlError, type BlockReason, InvalidFetchOptionsError, type TimeoutPhase } from './errors.ts';
export {
  DEFAULT_FETCH_OPTIONS,
  type FetchPageOptions,
  mergeFetchOptions,
  type ResolvedFetchOptions,
} from './fetch-options.ts';
export { fetchPage } from './fetch-page.ts';
export type * from './fetch-result.ts';
export { checkUrl, type ResolvedAddress, type Resolver, systemResolver } from './ssrf-guard.ts';
