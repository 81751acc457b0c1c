/** What `gleaner dev` prints about the database: where psql connects, and no password it should not show. */
import { redact } from '../db/pg-database';

export interface DatabaseShown {
  /** The URL the runtime connects with; it may carry a password. */
  databaseUrl?: string;
  /** True when it is the embedded store's socket, false for a DATABASE_URL the operator set. */
  embedded: boolean;
}

/**
 * The embedded store's psql URL is printed whole: it is the user's own way in, and its password
 * lives in a 0600 file beside the store anyway; the line after says it is a secret. A DATABASE_URL
 * the operator set is redacted: they know it, and a terminal or CI log is no place for a server's
 * password.
 */
export function psqlLines({ databaseUrl, embedded }: DatabaseShown): string[] {
  if (!databaseUrl) return [];
  if (!embedded)
    return [`  psql            psql "${redact(databaseUrl)}"  (your DATABASE_URL, password hidden)`];
  return [
    `  psql            psql "${databaseUrl}"`,
    "                  (holds the store socket's password, kept in pgdata.password: keep it to yourself)",
  ];
}
