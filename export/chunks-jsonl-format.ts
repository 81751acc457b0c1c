/**
 * `chunks.jsonl`: one JSON line per chunk in page and position order, the shape LangChain's and
 * LlamaIndex's JSON loaders read (`text` plus `metadata`), with the vector as pgvector prints it.
 */
import type { ExportFormat, ExportRun } from './export-format';

const CHUNK_BATCH = 500;

export interface ChunksJsonlFormat extends ExportFormat {
  /** Chunks written (after `finish`). */
  readonly count: number;
}

export function chunksJsonl(): ChunksJsonlFormat {
  let count = 0;
  return {
    name: 'chunks.jsonl',
    get count() {
      return count;
    },
    async finish(run: ExportRun) {
      const { db, where, params, paths } = run;
      const out = await run.ownFile('chunks.jsonl');
      let after: [string, number] = ['', -1];
      for (;;) {
        const at = params.length;
        const { rows } = await db.query<{
          url: string;
          final_url: string;
          title: string | null;
          position: number;
          chunk_hash: string;
          heading_path: string[];
          content: string;
          token_count: number;
          embedding: string | null;
          embedding_model: string | null;
          page_first: number | null;
          page_last: number | null;
        }>(
          `SELECT p.url, p.final_url, p.title, c.position, c.chunk_hash, c.heading_path, c.content, c.token_count,
                  c.embedding::text AS embedding, c.embedding_model, c.page_first, c.page_last
             FROM chunks c JOIN pages p ON p.id = c.page_id
            WHERE ${where} AND (p.url, c.position) > ($${at + 1}, $${at + 2})
            ORDER BY p.url, c.position LIMIT ${CHUNK_BATCH}`,
          [...params, after[0], after[1]],
        );
        if (rows.length === 0) break;
        for (const row of rows) {
          const line = JSON.stringify({
            id: `${row.url}#chunk-${row.position}`,
            text: row.content,
            metadata: {
              url: row.final_url,
              canonical_url: row.url,
              title: row.title,
              heading_path: row.heading_path,
              position: row.position,
              chunk_sha256: row.chunk_hash,
              token_count: row.token_count,
              file: paths.get(row.url) ?? null,
              embedding_model: row.embedding_model,
              // A PDF's pages the chunk spans (1-based); absent for other documents.
              ...(row.page_first === null ? {} : { page_first: row.page_first, page_last: row.page_last }),
            },
          });
          // The vector goes in as pgvector's own text: valid JSON, and the same digits on every run.
          await out.write(`${line.slice(0, -1)},"vector":${row.embedding ?? 'null'}}\n`);
          count += 1;
        }
        const last = rows[rows.length - 1];
        if (last) after = [last.url, last.position];
      }
      await run.attempt('chunks.jsonl', () => out.close());
    },
  };
}
