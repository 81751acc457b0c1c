/**
 * One output format of `gleaner export`. The export reads the pages once, in URL order, and hands
 * each to every chosen format in turn; a format writes its own files through the shared
 * `TreeWriter`, so incremental writes, stale-file removal and the report come for free. A new format
 * is one module implementing this and one line where `exportCorpus` lists its formats.
 */
import type { Database, SqlParam } from '../db/database';
import type { ExportPage } from './page-file';
import type { StreamedFile, TreeWriter } from './tree-writer';

/** What every format sees of the export under way. */
export interface ExportRun {
  readonly db: Database;
  readonly writer: TreeWriter;
  /** The filter over `pages p` that selects the exported pages, and its parameters. */
  readonly where: string;
  readonly params: readonly SqlParam[];
  /** Each exported page's file in the tree (`<host>/<path>.md`), by canonical URL. */
  readonly paths: ReadonlyMap<string, string>;
  /** One of the export's own files; if it cannot be opened its failure is recorded and writes go nowhere. */
  ownFile(file: string): Promise<StreamedFile>;
  /** Runs `work`, which writes `file`; a throw is recorded as that file's failure, not the export's. */
  attempt(file: string, work: () => Promise<void>): Promise<void>;
}

/** A page on its way out, with the tree file it is written to. */
export interface PageOut {
  readonly page: ExportPage;
  /** Its file in the tree. */
  readonly file: string;
  /** Its host folder (`hostDir(page.url)`). */
  readonly host: string;
}

export interface ExportFormat {
  /** Shown in errors and logs. */
  readonly name: string;
  /** Before the first page. A throw stops the export. */
  begin?(run: ExportRun): Promise<void>;
  /**
   * One page, in URL order, after the formats listed before this one took it. A throw fails the
   * page (listed with its error in the report) and the formats after this one do not see it.
   */
  page?(out: PageOut, run: ExportRun): Promise<void>;
  /** After the last page. Failures of its own files go through `run.attempt`; a throw stops the export. */
  finish?(run: ExportRun): Promise<void>;
}
