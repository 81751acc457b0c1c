/**
 * URLs whose file extension says they are not a page (archives, media, notebooks, source
 * files, office documents). Skipping them before the request saves the origin a fetch the
 * crawler would throw away; a page served from such a path is rare enough to accept the loss.
 */
export const NON_PAGE_EXTENSIONS: readonly string[] = [
  // archives and binaries
  '7z',
  'apk',
  'bin',
  'bz2',
  'deb',
  'dmg',
  'exe',
  'gz',
  'iso',
  'jar',
  'msi',
  'rar',
  'rpm',
  'tar',
  'tgz',
  'whl',
  'xz',
  'zip',
  // images, audio, video, fonts
  'avif',
  'bmp',
  'gif',
  'ico',
  'jpeg',
  'jpg',
  'png',
  'svg',
  'tif',
  'tiff',
  'webp',
  'aac',
  'flac',
  'm4a',
  'mp3',
  'ogg',
  'wav',
  'avi',
  'm4v',
  'mkv',
  'mov',
  'mp4',
  'mpeg',
  'webm',
  'wmv',
  'eot',
  'otf',
  'ttf',
  'woff',
  'woff2',
  // documents and data
  'csv',
  'doc',
  'docx',
  'epub',
  'odp',
  'ods',
  'odt',
  'pdf',
  'ppt',
  'pptx',
  'ps',
  'rtf',
  'xls',
  'xlsx',
  'ipynb',
  'json',
  'xml',
  'yaml',
  'yml',
  // code and assets
  'css',
  'js',
  'map',
  'mjs',
  'py',
  'rs',
  'c',
  'h',
  'cpp',
  'java',
  'go',
  'rb',
  'sh',
];

const EXTENSIONS = new Set(NON_PAGE_EXTENSIONS);

/**
 * Sphinx's "Show Source" copies (`_sources/<page>.rst.txt`, `.md.txt`, `.ipynb.txt`): the reStructuredText
 * of a page the crawl indexes from its HTML. Now that text/plain is fetched by default they would be a
 * raw twin of every page: each passage twice in search (the twin, markup and all, taking a top-k place
 * from another page) and too unlike the HTML's text for SimHash to call them duplicates. Sphinx marks
 * the links rel="nofollow" (all 130 on the bundled skopt site), which the crawler honours already; this
 * also keeps them out when a theme, a sitemap or a hand-written link leaves that off.
 */
const SPHINX_SOURCE_TWIN = /\/_sources\/.+\.txt$/i;

export function isSphinxSourceTwin(url: string): boolean {
  try {
    return SPHINX_SOURCE_TWIN.test(new URL(url).pathname);
  } catch {
    return false;
  }
}

/**
 * Files at an origin's root that speak to machines, not readers: robots.txt, the ads.txt sellers
 * lists and whatever lives under `/.well-known/`. Now that text/plain is fetched by default, a link
 * or a redirect to one stored its rules as a page, searchable beside the site's content.
 */
const MACHINE_FILES = new Set(['/robots.txt', '/ads.txt', '/app-ads.txt']);

export function isMachineFile(url: string): boolean {
  let pathname: string;
  try {
    pathname = new URL(url).pathname.toLowerCase();
  } catch {
    return false;
  }
  return MACHINE_FILES.has(pathname) || pathname.startsWith('/.well-known/');
}

/** The extension of each document type a crawl may fetch (`contentTypes`) that the list above holds. */
const DOCUMENT_EXTENSIONS: Readonly<Record<string, string>> = { pdf: 'pdf', docx: 'docx' };

/**
 * True when the URL's last path segment ends in a known non-page extension. `contentTypes` (the
 * crawl's) makes the extensions of the documents it fetches pages again: `.pdf` with `pdf`.
 */
export function hasNonPageExtension(url: string, contentTypes: readonly string[] = []): boolean {
  let pathname: string;
  try {
    pathname = new URL(url).pathname;
  } catch {
    return false;
  }
  const lastSegment = pathname.slice(pathname.lastIndexOf('/') + 1);
  const dot = lastSegment.lastIndexOf('.');
  if (dot <= 0) return false;
  const extension = lastSegment.slice(dot + 1).toLowerCase();
  return EXTENSIONS.has(extension) && !contentTypes.some((type) => DOCUMENT_EXTENSIONS[type] === extension);
}
