/**
 * The hosts the exported pages' own crawls were allowed to fetch (`--allow-host`, kept in each
 * crawl's spec). A user who crawled `127.0.0.1` with `--allow-host 127.0.0.1` has already said the
 * SSRF guard may reach it; asking again at export time only left every image of that site refused.
 * The hosts come from the crawls that last fetched the pages being exported, nothing wider.
 */
import type { Database, SqlParam } from '../db/database';

/**
 * The allowed hosts of the crawls behind the pages that `where` selects (a filter over `pages p`),
 * sorted and without repeats. A spec without an `allowHosts` array adds nothing.
 */
export async function allowHostsOfCrawls(
  db: Database,
  where: string,
  params: readonly SqlParam[],
): Promise<string[]> {
  const { rows } = await db.query<{ host: string }>(
    `SELECT DISTINCT h.host
       FROM crawls c
      CROSS JOIN LATERAL jsonb_array_elements_text(
              CASE WHEN jsonb_typeof(c.spec -> 'allowHosts') = 'array' THEN c.spec -> 'allowHosts' ELSE '[]'::jsonb END
            ) AS h(host)
      WHERE c.id IN (SELECT DISTINCT p.crawl_id FROM pages p WHERE ${where})
      ORDER BY h.host`,
    [...params],
  );
  return rows.map((row) => row.host).filter((host) => host.trim() !== '');
}
