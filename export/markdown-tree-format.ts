/**
 * The Markdown tree (seed 004): one `<host>/<path>.md` per page with YAML frontmatter, links between
 * exported pages made relative and images stored beside them under `<host>/_assets/`.
 */
import { canonicalizeUrl } from '../domain/url';
import type { AssetStore } from './asset-store';
import type { ExportFormat, ExportRun, PageOut } from './export-format';
import { rewriteMarkdownLinks } from './markdown-links';
import { renderPageFile } from './page-file';
import { relativeLink } from './tree-paths';

export interface MarkdownTreeFormat extends ExportFormat {
  /** Images linked from the pages written so far (stored and pointed at by a relative link). */
  readonly linkedAssets: number;
}

/**
 * `byLinkUrl` maps every URL a link may use for an exported page (its canonical URL or where it was
 * finally served from) to its file; `assets` is absent when images are not exported.
 */
export function markdownTree(options: {
  assets: AssetStore | undefined;
  byLinkUrl: ReadonlyMap<string, string>;
}): MarkdownTreeFormat {
  const { assets, byLinkUrl } = options;
  let linkedAssets = 0;
  return {
    name: 'markdown tree',
    get linkedAssets() {
      return linkedAssets;
    },
    async page({ page, file, host }: PageOut, { writer }: ExportRun) {
      const imageFiles = new Map<string, string | undefined>();
      if (assets) {
        rewriteMarkdownLinks(page.markdown, page.finalUrl, (target) => {
          if (target.image) imageFiles.set(target.url, undefined);
          return undefined;
        });
        for (const url of imageFiles.keys()) imageFiles.set(url, await assets.place(url, host, file));
      }
      const body = rewriteMarkdownLinks(page.markdown, page.finalUrl, (target) => {
        const at = target.url.indexOf('#');
        const fragment = at === -1 ? '' : target.url.slice(at);
        if (target.image) {
          const asset = imageFiles.get(target.url);
          return asset === undefined ? undefined : relativeLink(file, asset);
        }
        const canonical = canonicalizeUrl(target.url);
        const linked = canonical === null ? undefined : byLinkUrl.get(canonical);
        return linked === undefined ? undefined : relativeLink(file, linked, fragment);
      });
      await writer.write(file, renderPageFile(page, body));
      linkedAssets += [...imageFiles.values()].filter(Boolean).length;
    },
  };
}
