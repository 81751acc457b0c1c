/**
 * Activities are built by a factory so the process that hosts them decides what they talk to
 * (native Postgres or the embedded PGlite) and tests can inject real dependencies.
 */
import type { Database } from '../db/database';
import { createCrawlRecords } from './crawl-records';
import { createWebhookActivities, type WebhookActivities } from './deliver-webhook';
import { createEmbedActivities } from './embed-chunks';
import { createFetchAndStore } from './fetch-and-store';
import { createFetchRobots } from './fetch-robots';
import { createFrontierSpill } from './frontier-spill';
import { createPageBatchActivities } from './page-batches';
import { createPageContent } from './page-content';
import { createPageRecords } from './page-records';
import { createRecrawlFrontier } from './recrawl-frontier';
import { createRenderAndStore } from './render/render-and-store';
import { createRobotsPolicy } from './robots-policy';
import { createSiteTemplateActivities } from './site-templates';
import { createSitemapActivities } from './sitemaps';
import { createSoft404Probe } from './soft-404-probe';
import { createLlmActivities, type LlmConfig, llmConfigFromEnv } from './summarize-llm';
import { createSummarizeActivities } from './summarize-offline';
import type { ActivityApi } from './types';

export interface ActivityDeps {
  db: Database;
  /** The LLM endpoint of the `gleaner-llm` activities. @default from GLEANER_LLM_URL, GLEANER_LLM_MODEL, GLEANER_LLM_API_KEY */
  llm?: LlmConfig;
}

export function createActivities(deps: ActivityDeps): ActivityApi & WebhookActivities {
  const robots = createRobotsPolicy(deps);
  const pageContent = createPageContent(deps);
  const summarize = createSummarizeActivities(deps);
  return {
    fetchAndStore: createFetchAndStore({ ...deps, robots }),
    fetchRobots: createFetchRobots({ ...deps, robots }),
    renderAndStore: createRenderAndStore({ ...deps, robots }),
    probeSoft404: createSoft404Probe({ ...deps, robots }),
    ...createCrawlRecords(deps),
    ...createPageRecords(deps),
    ...pageContent,
    ...createPageBatchActivities({ db: deps.db, ...pageContent, ...summarize }),
    ...createSiteTemplateActivities({ db: deps.db, ...pageContent }),
    ...createEmbedActivities(deps),
    ...createSitemapActivities({ ...deps, robots }),
    ...createRecrawlFrontier(deps),
    ...createFrontierSpill(deps),
    ...summarize,
    ...createLlmActivities({ db: deps.db, llm: deps.llm ?? llmConfigFromEnv() }),
    ...createWebhookActivities({ db: deps.db }),
  };
}

export type { ActivityApi } from './types';
