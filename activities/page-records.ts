/** Page-stage activities. Today: mark the page processed; the content pipeline grows here. */
import { ApplicationFailure } from '@temporalio/activity';
import type { Database } from '../db/database';
import type { RecordPageInput, RecordPageResult } from './types';

export function createPageRecords({ db }: { db: Database }) {
  return {
    async recordPage({ pageId }: RecordPageInput): Promise<RecordPageResult> {
      const result = await db.query('UPDATE pages SET indexed_at = now() WHERE id = $1 RETURNING id', [
        pageId,
      ]);
      if (result.rows.length === 0) {
        throw ApplicationFailure.nonRetryable(`page ${pageId} does not exist`, 'PageNotFound');
      }
      return { indexed: true };
    },
  };
}
