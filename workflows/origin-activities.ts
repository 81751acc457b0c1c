/**
 * The origin workflow's activities and the timeouts and retry policies each needs, kept apart
 * from the workflow's logic.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { ActivityApi } from '../activities/types';
import { ACTIVITY_HEARTBEAT_TIMEOUT, NON_RETRYABLE_ERROR_TYPES, TASK_QUEUES } from '../domain/temporal-names';

export const { fetchAndStore, fetchRobots } = proxyActivities<ActivityApi>({
  taskQueue: TASK_QUEUES.fetch,
  // Fetch timeouts (connect + headers + body) stay well inside this; the heartbeat timeout lets
  // a crashed worker's attempt be retried within seconds instead of minutes.
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '10 seconds',
  // Long enough to ride out a database or worker outage of about half an hour; the activity
  // itself stops retrying HTTP failures after a few attempts. Programming errors fail at once.
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: 60,
    nonRetryableErrorTypes: NON_RETRYABLE_ERROR_TYPES,
  },
});

/** The soft-404 probe: one request, a few attempts (it is evidence, not a page). */
export const { probeSoft404 } = proxyActivities<ActivityApi>({
  taskQueue: TASK_QUEUES.fetch,
  startToCloseTimeout: '2 minutes',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: 5,
    nonRetryableErrorTypes: NON_RETRYABLE_ERROR_TYPES,
  },
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

export const { nextClaimedUrls, nextKnownUrls, nextSpilledUrls, spillUrls } = proxyActivities<ActivityApi>({
  taskQueue: TASK_QUEUES.fetch,
  startToCloseTimeout: '30 seconds',
  retry: {
    maximumAttempts: 60,
    maximumInterval: '30 seconds',
    nonRetryableErrorTypes: NON_RETRYABLE_ERROR_TYPES,
  },
});

/**
 * Rendering in headless Chromium, on its own queue. Navigation and settling are bounded inside;
 * a worker killed mid-page is noticed by the heartbeat and the page retried on another worker.
 * A missing browser fails at once (BrowserUnavailableError); a crashed one is retried twice.
 */
export const { renderAndStore } = proxyActivities<ActivityApi>({
  taskQueue: TASK_QUEUES.render,
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '10 seconds',
  retry: {
    initialInterval: '2 seconds',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: 3,
    nonRetryableErrorTypes: [...NON_RETRYABLE_ERROR_TYPES, 'BrowserUnavailableError'],
  },
});

/**
 * Claims an origin's known pages for a recrawl: one pass over its stored pages. It beats every 5 s:
 * without a heartbeat timeout a worker killed mid-claim held the origin for the full ten minutes.
 */
export const { claimKnownPages } = proxyActivities<ActivityApi>({
  taskQueue: TASK_QUEUES.fetch,
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: ACTIVITY_HEARTBEAT_TIMEOUT,
  retry: {
    maximumAttempts: 60,
    maximumInterval: '30 seconds',
    nonRetryableErrorTypes: NON_RETRYABLE_ERROR_TYPES,
  },
});
