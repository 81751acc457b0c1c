/**
 * Site templates in Postgres (migration 018; the rules are domain/site-template.ts): each origin's
 * block counts, the template read from them, and the re-clean of pages processed with an older
 * template.
 *
 * The counts are kept by difference: a page's counted keys are stored on it (`template_keys`), and
 * processing it again adds the keys it gained and takes off those it lost, so a retry, a re-clean or
 * a recrawl of an unchanged page leaves every count as it was. The template is read from the counts
 * when a page is processed; a page records the signature of the template keys it was cleaned with
 * (`template_signature`), so the pages whose cleaning the current template would change are found
 * without re-extracting any (`recleanSiteTemplate`).
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { Database, Queryable } from '../db/database';
import { blockKey, templateThresholds } from '../domain/site-template';
import { withHeartbeat } from './heartbeat';
import type { TemplateBlockSeen, TemplateKeys } from './site-template-clean';

/** Pages whose signature is checked per query; pages re-cleaned per activity. */
const SCAN_PAGE = 500;
export const RECLEAN_PAGES_PER_CALL = 50;

/** The origin's template as counted now (empty until the origin has enough pages). */
export async function loadSiteTemplate(db: Queryable, origin: string): Promise<TemplateKeys> {
  const seen = await db.query<{ pages_seen: number }>(
    'SELECT pages_seen FROM site_templates WHERE origin = $1',
    [origin],
  );
  const thresholds = templateThresholds(Number(seen.rows[0]?.pages_seen ?? 0));
  if (!thresholds) return { sectionKeys: [], proseKeys: [] };
  const { rows } = await db.query<{ block_key: string; page_count: number }>(
    `SELECT block_key, page_count FROM site_template_blocks
      WHERE origin = $1 AND page_count >= $2 ORDER BY block_key`,
    [origin, thresholds.section],
  );
  return {
    sectionKeys: rows.map((row) => row.block_key),
    proseKeys: rows.filter((row) => Number(row.page_count) >= thresholds.prose).map((row) => row.block_key),
  };
}

/**
 * Which of the page's keys the template holds, as one hash: two pages cleaned with templates of the
 * same signature were cleaned alike. '' when none of its keys is template.
 */
export function templateSignature(template: TemplateKeys, pageKeys: readonly string[]): string {
  if (template.sectionKeys.length === 0) return '';
  const section = new Set(template.sectionKeys);
  const prose = new Set(template.proseKeys);
  const hits = pageKeys
    .filter((key) => section.has(key))
    .map((key) => (prose.has(key) ? `p${key}` : `s${key}`))
    .sort();
  return hits.length === 0 ? '' : blockKey('signature', hits.join(','));
}

/** Counts the page's block keys for its origin, by difference with what it counted before. */
export async function recordPageBlocks(
  db: Database,
  pageId: number,
  origin: string,
  blocks: readonly TemplateBlockSeen[],
): Promise<void> {
  await db.transaction(async (tx) => {
    const before = await tx.query<{ template_keys: string[] | null }>(
      'SELECT template_keys FROM pages WHERE id = $1 FOR UPDATE',
      [pageId],
    );
    const old = before.rows[0]?.template_keys ?? null;
    const oldKeys = new Set(old ?? []);
    const newKeys = new Set(blocks.map((block) => block.key));
    const added = blocks
      .filter((block) => !oldKeys.has(block.key))
      .sort((a, b) => a.key.localeCompare(b.key));
    const gone = [...oldKeys].filter((key) => !newKeys.has(key)).sort();
    if (old !== null && added.length === 0 && gone.length === 0) return;
    await tx.query(
      `INSERT INTO site_templates (origin, pages_seen) VALUES ($1, $2)
       ON CONFLICT (origin) DO UPDATE SET pages_seen = site_templates.pages_seen + EXCLUDED.pages_seen, updated_at = now()`,
      [origin, old === null ? 1 : 0],
    );
    if (added.length > 0) {
      await tx.query(
        `INSERT INTO site_template_blocks (origin, block_key, page_count, kind, place, sample)
         SELECT $1, k, 1, kind, place, sample FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS t(k, kind, place, sample)
          ORDER BY k
         ON CONFLICT (origin, block_key) DO UPDATE SET page_count = site_template_blocks.page_count + 1`,
        [
          origin,
          added.map((block) => block.key),
          added.map((block) => block.kind),
          added.map((block) => block.place),
          added.map((block) => block.sample),
        ],
      );
    }
    if (gone.length > 0) {
      await tx.query(
        `UPDATE site_template_blocks SET page_count = page_count - 1 WHERE origin = $1 AND block_key = ANY($2::text[])`,
        [origin, gone],
      );
      await tx.query('DELETE FROM site_template_blocks WHERE origin = $1 AND page_count <= 0', [origin]);
    }
    await tx.query('UPDATE pages SET template_keys = $2::text[] WHERE id = $1', [pageId, [...newKeys]]);
  });
}

/**
 * Moves the origin's template version on when its set of template keys changed since it was last
 * stored (a recrawl of an unchanged site leaves it where it was).
 */
export async function refreshTemplateVersion(
  db: Database,
  origin: string,
  template: TemplateKeys,
): Promise<{ version: number; changed: boolean }> {
  const hash = templateSignature(template, template.sectionKeys);
  const { rows } = await db.query<{ version: number; changed: boolean }>(
    `UPDATE site_templates s SET
        version = s.version + CASE WHEN o.old_hash = $2 THEN 0 ELSE 1 END,
        template_hash = $2, section_blocks = $3, prose_blocks = $4, updated_at = now()
       FROM (SELECT template_hash AS old_hash FROM site_templates WHERE origin = $1) o
      WHERE s.origin = $1
      RETURNING s.version, o.old_hash <> $2 AS changed`,
    [origin, hash, template.sectionKeys.length, template.proseKeys.length],
  );
  return { version: Number(rows[0]?.version ?? 0), changed: rows[0]?.changed === true };
}

export interface RecleanSiteTemplateInput {
  origin: string;
  /** Pages with a larger id are looked at (0 to start). */
  afterPageId: number;
}

export interface RecleanSiteTemplateResult {
  /** Pages processed again because the template changed what they lose; they need embedding and a summary. */
  pageIds: number[];
  /** Where the next call starts; absent when the origin's pages are done. */
  nextAfterPageId?: number;
  /** The origin's template version after this call. */
  version: number;
}

export interface SiteTemplateDeps {
  db: Database;
  /** The page path (activities/page-content.ts); typed here by what is read, so types.ts can name this module's types. */
  processPageContent(input: {
    pageId: number;
  }): Promise<{ chunks: number; skipped: boolean; duplicate?: boolean }>;
}

export function createSiteTemplateActivities({ db, processPageContent }: SiteTemplateDeps) {
  return {
    /**
     * Runs the origin's pages whose cleaning the current template changes through the page path again
     * (processPageContent, idempotent: chunks keyed by hash keep their vectors), at most
     * RECLEAN_PAGES_PER_CALL per call.
     */
    async recleanSiteTemplate(input: RecleanSiteTemplateInput): Promise<RecleanSiteTemplateResult> {
      const template = await loadSiteTemplate(db, input.origin);
      const { version } = await refreshTemplateVersion(db, input.origin, template);
      const stale: number[] = [];
      let after = input.afterPageId;
      let exhausted = false;
      while (stale.length < RECLEAN_PAGES_PER_CALL) {
        const { rows } = await db.query<{
          id: string;
          template_keys: string[];
          template_signature: string | null;
        }>(
          `SELECT id::text AS id, template_keys, template_signature FROM pages
            WHERE origin = $1 AND id > $2 AND template_keys IS NOT NULL AND removed_at IS NULL
              AND extract_failed_hash IS DISTINCT FROM content_hash
            ORDER BY id LIMIT $3`,
          [input.origin, after, SCAN_PAGE],
        );
        for (const row of rows) {
          after = Number(row.id);
          if (templateSignature(template, row.template_keys) !== (row.template_signature ?? '')) {
            stale.push(after);
            if (stale.length >= RECLEAN_PAGES_PER_CALL) break;
          }
        }
        if (rows.length < SCAN_PAGE && stale.length < RECLEAN_PAGES_PER_CALL) {
          exhausted = true;
          break;
        }
      }
      const pageIds: number[] = [];
      await withHeartbeat(async () => {
        for (const pageId of stale) {
          // A page whose new body fails for good (its deadline) keeps the cleaning it had; the failure
          // is remembered with its body (page-content.ts), so the next re-clean passes it over.
          const result = await processPageContent({ pageId }).catch((error: unknown) => {
            if (error instanceof ApplicationFailure && error.nonRetryable) return undefined;
            throw error;
          });
          if (result && !result.skipped && !result.duplicate && result.chunks > 0) pageIds.push(pageId);
        }
      });
      return { pageIds, version, ...(exhausted ? {} : { nextAfterPageId: after }) };
    },
  };
}

export interface OriginTemplateReport {
  origin: string;
  version: number;
  pagesSeen: number;
  /** Pages with at least one block removed. */
  pagesCleaned: number;
  blocksRemoved: number;
  /** The template's blocks, most pages first (at most `limit`). */
  blocks: Array<{ kind: string; place: string; sample: string; pages: number }>;
}

/** Each origin's template for `gleaner report`: its blocks with their page counts. */
export async function readSiteTemplates(
  db: Queryable,
  options: { origins?: readonly string[]; limit?: number } = {},
): Promise<OriginTemplateReport[]> {
  const limit = options.limit ?? 20;
  const origins = await db.query<{ origin: string; version: number; pages_seen: number }>(
    `SELECT origin, version, pages_seen FROM site_templates
      WHERE ($1::text[] IS NULL OR origin = ANY($1::text[])) ORDER BY origin`,
    [options.origins ? [...options.origins] : null],
  );
  const reports: OriginTemplateReport[] = [];
  for (const row of origins.rows) {
    const template = await loadSiteTemplate(db, row.origin);
    const cleaned = await db.query<{ pages: string; blocks: string | null }>(
      `SELECT count(*) FILTER (WHERE template_blocks_removed > 0) AS pages, sum(template_blocks_removed) AS blocks
         FROM pages WHERE origin = $1`,
      [row.origin],
    );
    const blocks = await db.query<{ kind: string; place: string; sample: string; page_count: number }>(
      `SELECT kind, place, sample, page_count FROM site_template_blocks
        WHERE origin = $1 AND block_key = ANY($2::text[]) AND sample ~ '\\S+\\s+\\S+\\s+\\S'
        ORDER BY page_count DESC, place, sample LIMIT $3`,
      [row.origin, template.sectionKeys, limit],
    );
    reports.push({
      origin: row.origin,
      version: Number(row.version),
      pagesSeen: Number(row.pages_seen),
      pagesCleaned: Number(cleaned.rows[0]?.pages ?? 0),
      blocksRemoved: Number(cleaned.rows[0]?.blocks ?? 0),
      blocks: blocks.rows.map((block) => ({
        kind: block.kind,
        place: block.place,
        sample: block.sample,
        pages: Number(block.page_count),
      })),
    });
  }
  return reports;
}
