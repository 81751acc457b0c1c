/**
 * `gleaner report [--json]`: the corpus's integrity report. Exit status 1 when the store is
 * inconsistent (a check marked inconsistent found something), 0 when it is sound.
 */

import { type OriginTemplateReport, readSiteTemplates } from '../activities/site-templates';
import { openStore } from '../infra/embedded-store';
import { type FlaggedPagesReport, flaggedPagesReport } from '../report/flagged-pages';
import { type IntegrityReport, integrityReport } from '../report/integrity-report';
import { InconsistentStoreError } from './errors';

export interface ReportCommandOptions {
  json?: boolean;
}

export async function runReportCommand(options: ReportCommandOptions): Promise<void> {
  const db = await openStore({ requireCorpus: true });
  let report: IntegrityReport;
  let siteTemplates: OriginTemplateReport[];
  let flaggedPages: FlaggedPagesReport;
  try {
    report = await integrityReport(db);
    siteTemplates = await readSiteTemplates(db);
    flaggedPages = await flaggedPagesReport(db);
  } finally {
    await db.close();
  }
  process.stdout.write(
    options.json
      ? `${JSON.stringify({ ...report, siteTemplates, flaggedPages })}\n`
      : formatReport(report) + formatSiteTemplates(siteTemplates) + formatFlaggedPages(flaggedPages),
  );
  if (!report.ok) {
    const failed = report.checks
      .filter((c) => c.inconsistent && c.count > 0)
      .map((c) => `${c.name} (${c.count})`);
    throw new InconsistentStoreError(`the store is inconsistent: ${failed.join(', ')}`);
  }
}

export function formatReport(report: IntegrityReport): string {
  const { totals } = report;
  const model = totals.embeddingModel
    ? `${totals.embeddingModel.name}, ${totals.embeddingModel.dimension} dimensions (column ${totals.embeddingModel.columnDimension})`
    : 'none recorded';
  const lines = [
    `Corpus: ${totals.pages} pages (${totals.pagesWithMarkdown} with Markdown, ${totals.pagesIndexed} indexed), ` +
      `${totals.chunks} chunks, ${totals.vectors} vectors, ${totals.links} links, ${totals.summaries} summaries`,
    `Embedding model: ${model}`,
    '',
  ];
  for (const check of report.checks) {
    const mark = check.count === 0 ? 'ok  ' : check.inconsistent ? 'FAIL' : 'note';
    lines.push(`${mark} ${check.name}: ${check.count} — ${check.description}`);
    for (const sample of check.samples) lines.push(`       ${sample}`);
  }
  lines.push('', `Duplicate clusters (same content hash): ${report.duplicateClusters.length}`);
  for (const cluster of report.duplicateClusters.slice(0, 10)) {
    lines.push(
      `  ${cluster.contentSha256.slice(0, 12)}… ${cluster.urls.length} pages: ${cluster.urls.slice(0, 3).join(' ')}`,
    );
  }
  lines.push('', 'Blocked and failed URLs by reason:');
  if (report.fetchProblems.length === 0) lines.push('  none');
  for (const problem of report.fetchProblems) {
    lines.push(`  ${problem.outcome}${problem.status ? ` ${problem.status}` : ''}: ${problem.count}`);
  }
  lines.push('', report.ok ? 'The store is consistent.' : 'The store is INCONSISTENT (see FAIL lines).');
  return `${lines.join('\n')}\n`;
}

/** Each origin's learnt site template: its blocks with the pages they are on, and what was removed. */
export function formatSiteTemplates(origins: readonly OriginTemplateReport[]): string {
  const lines = ['', `Site templates (blocks removed from pages as template): ${origins.length} origins`];
  for (const origin of origins) {
    lines.push(
      `  ${origin.origin} (version ${origin.version}): ${origin.blocks.length === 0 ? 'no template' : `${origin.pagesCleaned} of ${origin.pagesSeen} pages cleaned`}, ${origin.blocksRemoved} blocks removed`,
    );
    for (const block of origin.blocks) {
      const place = block.place ? `${block.place} › ` : '';
      lines.push(`    ${String(block.pages).padStart(5)} pages  ${place}${block.sample.slice(0, 100)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** Pages the quality gate flagged (kept, left out of search by default), by flag, with samples. */
export function formatFlaggedPages(flagged: FlaggedPagesReport): string {
  const flags = Object.entries(flagged.byFlag);
  const total = flags.reduce((sum, [, n]) => sum + n, 0);
  const lines = [
    '',
    `Flagged pages (kept, left out of search unless --include-flagged): ${total === 0 ? 'none' : ''}`,
  ];
  for (const [flag, n] of flags) {
    lines.push(`  ${flag}: ${n}`);
    for (const sample of flagged.samples.filter((s) => s.flag === flag))
      lines.push(`       ${sample.url}${sample.reason ? ` — ${sample.reason}` : ''}`);
  }
  return `${lines.join('\n')}\n`;
}
