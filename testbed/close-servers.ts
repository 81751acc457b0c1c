import type http from 'node:http';

/**
 * Closes every server in `servers` and empties the list, dropping open connections first: a
 * keep-alive connection (the fetch path keeps them per origin) would otherwise hold `close` open.
 */
export async function closeServers(servers: http.Server[]): Promise<void> {
  await Promise.all(
    servers.splice(0).map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    ),
  );
}
