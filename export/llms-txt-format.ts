/**
 * `llms.txt` (one line per page, by host and folder) and `llms-full.txt` (every page's Markdown,
 * host by host), listing only pages whose own file was written.
 */
import type { ExportFormat, ExportRun, PageOut } from './export-format';
import { type LlmsEntry, llmsFullSection, oneLine, renderLlmsTxt } from './llms-txt';
import type { StreamedFile } from './tree-writer';

export function llmsTxt(): ExportFormat {
  const entries: LlmsEntry[] = [];
  let full: StreamedFile | undefined;
  let lastHost: string | undefined;
  return {
    name: 'llms.txt',
    async begin(run: ExportRun) {
      full = await run.ownFile('llms-full.txt');
    },
    async page({ page, file, host }: PageOut) {
      const title = page.title ?? page.url;
      if (host !== lastHost) await full?.write(`${lastHost === undefined ? '' : '\n'}# ${host}\n`);
      await full?.write(llmsFullSection({ title, url: page.finalUrl, file }, page.markdown));
      lastHost = host;
      const description = typeof page.metadata?.description === 'string' ? page.metadata.description : null;
      entries.push({
        host,
        file,
        url: page.finalUrl,
        title,
        note: oneLine(page.summary) ?? oneLine(description),
        about: oneLine(description) ?? oneLine(page.summary),
      });
    },
    async finish({ attempt, writer }: ExportRun) {
      await attempt('llms-full.txt', async () => full?.close());
      await attempt('llms.txt', () => writer.write('llms.txt', renderLlmsTxt(entries)));
    },
  };
}
