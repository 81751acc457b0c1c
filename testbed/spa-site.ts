/**
 * A loopback site with two halves: plain static pages, and a client-rendered app whose routes
 * (History API paths, every one served by the same empty shell page) fetch their text and their
 * links from JSON at run time. Only a browser sees the app's content. The app's script also tries
 * to read a robots-disallowed path and another loopback server: a guarded browser gets neither.
 */
import type http from 'node:http';
import { type SiteServer, serveSite } from './site-server';

export interface SpaSite {
  server: SiteServer;
  /** Paths of the app's routes, each with one word no other page has. */
  appRoutes: Array<{ path: string; word: string }>;
  staticPaths: Array<{ path: string; word: string }>;
  close(): Promise<void>;
}

const WORDS = [
  'zephyrine',
  'quillowen',
  'marbrisk',
  'tolventa',
  'gaskarel',
  'brimmondo',
  'helvanix',
  'corrowind',
];

function html(res: http.ServerResponse, body: string): void {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
}

/** Text of a few sentences, so the page has real content for extraction and chunking. */
function prose(word: string, topic: string): string {
  return [
    `The ${word} ${topic} is documented here in full, with enough sentences for a reader to learn from it.`,
    `Operators tune the ${word} settings carefully, measuring each change before they keep it.`,
    `Every ${topic} in this catalogue has a history, a maintainer and a list of known limitations.`,
  ].join(' ');
}

/**
 * `itemCount` item routes plus /app/ and /app/about; static pages link to /app/ and the app's own
 * links exist only in its JSON. `forbiddenUrl` is fetched by the app's script (it must never answer).
 */
export async function serveSpaSite(
  options: {
    itemCount?: number;
    forbiddenUrl?: string;
    /** The first JSON request for this route never answers (a render caught mid-page). */
    hangOnce?: string;
  } = {},
): Promise<SpaSite> {
  const itemCount = options.itemCount ?? 6;
  let hung = false;
  const server = await serveSite(undefined);
  const appRoutes: SpaSite['appRoutes'] = [
    { path: '/app/', word: 'appdashboard' },
    { path: '/app/about', word: 'appaboutus' },
  ];
  for (let i = 1; i <= itemCount; i++)
    appRoutes.push({ path: `/app/items/${i}`, word: `${WORDS[i % WORDS.length]}${i}` });
  const staticPaths = [
    { path: '/', word: 'homestead' },
    { path: '/docs/guide.html', word: 'guidebookish' },
    { path: '/docs/faq.html', word: 'faqsworthy' },
  ];

  server.route('/robots.txt', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nDisallow: /private/\n');
  });
  const staticPage = (word: string, links: string) =>
    `<!doctype html><html><head><title>Static ${word}</title></head><body><main><h1>Static ${word}</h1>` +
    `<p>${prose(word, 'handbook')}</p><p>${prose(word, 'appendix')}</p>${links}</main></body></html>`;
  server.route('/', (_req, res) =>
    html(
      res,
      staticPage(
        'homestead',
        '<ul><li><a href="/docs/guide.html">Guide</a></li><li><a href="/docs/faq.html">FAQ</a></li><li><a href="/app/">The app</a></li></ul>',
      ),
    ),
  );
  server.route('/docs/guide.html', (_req, res) =>
    html(res, staticPage('guidebookish', '<a href="/docs/faq.html">FAQ</a> <a href="/">Home</a>')),
  );
  server.route('/docs/faq.html', (_req, res) => html(res, staticPage('faqsworthy', '<a href="/">Home</a>')));

  const shell =
    '<!doctype html><html><head><title>App</title><script defer src="/static/app.js"></script></head>' +
    '<body><div id="root"></div><noscript>You need to enable JavaScript to run this app.</noscript></body></html>';
  for (const route of appRoutes) server.route(route.path, (_req, res) => html(res, shell));

  const routeData = (path: string) => {
    const route = appRoutes.find((r) => r.path === path);
    if (!route) return undefined;
    const links = appRoutes
      .filter((r) => r !== route)
      .map((r) => ({ href: r.path, text: `Go to ${r.word}` }));
    return {
      title: `App page ${route.word}`,
      text: [prose(route.word, 'widget'), prose(route.word, 'gadget')],
      links,
    };
  };
  server.route('/api/route', (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').searchParams.get('path') ?? '';
    if (path === options.hangOnce && !hung) {
      hung = true;
      return;
    }
    const data = routeData(path);
    res.writeHead(data ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(data ?? {}));
  });
  server.route('/private/secret.json', (_req, res) => {
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ secret: 'robotsleakedsecret' }));
  });
  const forbidden = JSON.stringify(options.forbiddenUrl ?? '');
  server.route('/static/app.js', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/javascript' }).end(`
      async function leak(url, label) {
        if (!url) return;
        try {
          const r = await fetch(url);
          const t = await r.text();
          const p = document.createElement('p');
          p.textContent = label + ' ' + t;
          document.getElementById('root').appendChild(p);
        } catch (e) {}
      }
      async function render(path) {
        const r = await fetch('/api/route?path=' + encodeURIComponent(path));
        const data = await r.json();
        const root = document.getElementById('root');
        root.innerHTML = '';
        const main = document.createElement('main');
        const h1 = document.createElement('h1');
        h1.textContent = data.title;
        main.appendChild(h1);
        for (const text of data.text) {
          const p = document.createElement('p');
          p.textContent = text;
          main.appendChild(p);
        }
        const nav = document.createElement('nav');
        for (const link of data.links) {
          const a = document.createElement('a');
          a.href = link.href;
          a.textContent = link.text;
          a.addEventListener('click', (event) => {
            event.preventDefault();
            history.pushState({}, '', link.href);
            render(link.href);
          });
          nav.appendChild(a);
        }
        main.appendChild(nav);
        root.appendChild(main);
        document.title = data.title;
      }
      window.addEventListener('popstate', () => render(location.pathname));
      render(location.pathname);
      leak('/private/secret.json', 'robots leak:');
      leak(${forbidden}, 'private leak:');
    `);
  });
  return { server, appRoutes, staticPaths, close: () => server.close() };
}
