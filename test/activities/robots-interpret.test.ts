/**
 * robots.txt answers as real loopback servers send them, read by the crawler (`interpretRobots`) and
 * by `gleaner robots` (`robotsFromFetch`): both must reach the same verdict for every kind of answer,
 * so the command reports what a crawl would do. Traffic goes to 127.0.0.1 only.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchPage } from '../../activities/http/fetch-page';
import { interpretRobots, ROBOTS_FETCH } from '../../activities/robots-policy';
import { robotsFromFetch } from '../../cli/robots-command';
import { evaluate } from '../../domain/robots';

const RULES = 'User-agent: *\nDisallow: /private/\n';

/** Each path answers robots.txt one way; the expected verdict for /private/x and for /. */
const ANSWERS: Record<
  string,
  { send: (res: http.ServerResponse) => void; crawler: string; privateAllowed: boolean; rootAllowed: boolean }
> = {
  '/plain': {
    send: (res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(RULES),
    crawler: 'fetched',
    privateAllowed: false,
    rootAllowed: true,
  },
  // Servers that send no type, or the wrong one, still mean their rules.
  '/no-type': {
    send: (res) => res.writeHead(200).end(RULES),
    crawler: 'fetched',
    privateAllowed: false,
    rootAllowed: true,
  },
  '/html-type': {
    send: (res) => res.writeHead(200, { 'content-type': 'text/html' }).end(RULES),
    crawler: 'fetched',
    privateAllowed: false,
    rootAllowed: true,
  },
  '/bad-type': {
    send: (res) => res.writeHead(200, { 'content-type': 'nonsense' }).end(RULES),
    crawler: 'fetched',
    privateAllowed: false,
    rootAllowed: true,
  },
  '/zstd': {
    send: (res) => res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'zstd' }).end('xx'),
    crawler: 'unavailable-allow-all',
    privateAllowed: true,
    rootAllowed: true,
  },
  '/not-modified': {
    send: (res) => res.writeHead(304).end(),
    crawler: 'unavailable-allow-all',
    privateAllowed: true,
    rootAllowed: true,
  },
  '/gone': {
    send: (res) => res.writeHead(404, { 'content-type': 'text/html' }).end('<p>no</p>'),
    crawler: 'unavailable-allow-all',
    privateAllowed: true,
    rootAllowed: true,
  },
  '/loop': {
    send: (res) => res.writeHead(302, { location: '/loop' }).end(),
    crawler: 'unavailable-allow-all',
    privateAllowed: true,
    rootAllowed: true,
  },
  '/down': {
    send: (res) => res.writeHead(503, { 'content-type': 'text/plain' }).end('maintenance'),
    crawler: 'unreachable-disallow-all',
    privateAllowed: false,
    rootAllowed: false,
  },
  '/slow-down': {
    send: (res) => res.writeHead(429, { 'content-type': 'text/plain' }).end('later'),
    crawler: 'unreachable-disallow-all',
    privateAllowed: false,
    rootAllowed: false,
  },
};

let server: http.Server;
let origin: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const answer = ANSWERS[req.url ?? ''];
    if (answer) answer.send(res);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe('robots.txt read by the crawler and by gleaner robots', () => {
  it.each(Object.entries(ANSWERS))('%s: the same verdict from both', async (path, expected) => {
    const fetched = await fetchPage(`${origin}${path}`, {
      userAgent: 'gleaner-test',
      allowHosts: ['127.0.0.1'],
      ...ROBOTS_FETCH,
    });
    const crawler = interpretRobots(origin, fetched);
    const command = robotsFromFetch(fetched);
    expect(crawler.source).toBe(expected.crawler);
    for (const [url, allowed] of [
      [`${origin}/private/x`, expected.privateAllowed],
      [`${origin}/`, expected.rootAllowed],
    ] as const) {
      expect(evaluate(crawler.rules, url, 'gleaner-test').allowed, `crawler on ${url}`).toBe(allowed);
      expect(evaluate(command.robots, url, 'gleaner-test').allowed, `command on ${url}`).toBe(allowed);
    }
    // An allow-all or disallow-all answer says why, to the crawl's fetch log and to the command's report.
    if (crawler.source !== 'fetched' && path !== '/gone') expect(crawler.error).toMatch(/\S/);
    if (command.source !== 'fetched' && !command.source.startsWith('status-')) {
      expect(command.reason).toMatch(/\S/);
    }
  });
});
