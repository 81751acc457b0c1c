/**
 * The origin workflow's activities and the timeouts and retry policies each needs, kept apart
 * from the workflow's logic.
 */
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { ActivityApi } from '../activities/types';
import { NON_RETRYABLE_ERROR_TYPES, TASK_QUEUES } from '../domain/temporal-names';

// Long enough to ride out a database or worker outage of about half an hour; the activity
// itself stops retrying HTTP failures after a few attempts. Programming errors fail at once.
const fetchRetry = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '30 seconds',
  maximumAttempts: 60,
  nonRetryableErrorTypes: NON_RETRYABLE_ERROR_TYPES,
};

export const { fetchAndStore, fetchRobots } = proxyActivities<ActivityApi>({
  taskQueue: TASK_QUEUES.fetch,
  // Fetch timeouts (connect + headers + body) stay well inside this; the heartbeat timeout lets
  // a crashed worker's attempt be retried within seconds instead of minutes.
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '10 seconds',
  retry: fetchRetry,
});

/**
 * The same fetch as a local activity, run by the worker that runs the origin workflow. One
 * request per origin at a time is a loop of timer → fetch → timer; as a local activity the fetch
 * and the next timer share one workflow task, with no activity task to dispatch through the
 * server. bench:politeness (H = 20, δ = 0.5 s, crawl and fetch on two cores): 18.4 pages/s and
 * 119 ms of CPU per page as an activity on the fetch queue, 24.0 pages/s and 92 ms as a local one.
 * Beyond `localRetryThreshold` a retry waits on a durable timer, as an activity's would.
 */
export const { fetchAndStore: fetchAndStoreLocally } = proxyLocalActivities<ActivityApi>({
  startToCloseTimeout: '2 minutes',
  localRetryThreshold: '10 seconds',
  retry: fetchRetry,
});

export const { ingestSitemaps } = proxyActivities<ActivityApi>({
  taskQueue: TASK_QUEUES.fetch,
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '10 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: 10,
    nonRetryableErrorTypes: NON_RETRYABLE_ERROR_TYPES,
  },
});

export const { nextClaimedUrls } = proxyActivities<ActivityApi>({
  taskQueue: TASK_QUEUES.fetch,
  startToCloseTimeout: '30 seconds',
  retry: {
    maximumAttempts: 60,
    maximumInterval: '30 seconds',
    nonRetryableErrorTypes: NON_RETRYABLE_ERROR_TYPES,
  },
});
