// The workflow bundle's entry: every workflow type the crawl-queue worker serves.
export { crawlWorkflow } from './crawl-workflow';
export { originWorkflow } from './origin-workflow';
export { pageWorkflow } from './page-workflow';
