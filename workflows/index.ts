// The workflow bundle's entry: every workflow type the crawl-queue worker serves.
export { crawlWorkflow } from './crawl-workflow';
export { originWorkflow } from './origin-workflow';
export { pageBatchWorkflow } from './page-batch-workflow';
export { pageWorkflow } from './page-workflow';
export { webhooksWorkflow } from './webhooks';
