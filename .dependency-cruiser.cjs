/**
 * The layering `npm run lint` enforces (dependency-cruiser 16; 17 and later need Node 22).
 *
 * The house stands on floors; a folder imports only folders on floors below its own (and itself).
 * Order as `farm-studio look` reads it from the imports, ground first:
 *
 *   floor 1  domain/  db/                 pure rules and types; the store
 *   floor 2  infra/  extract/  report/    processes, services and logging; page text; integrity
 *   floor 3  embed/                       the embedding model
 *   floor 4  activities/  search/         the I/O steps; hybrid search
 *   floor 5  workflows/  export/  workers/  mcp/   orchestration; the MCP server the API and CLI serve
 *   floor 6  api/  testbed/               the HTTP API; servers and stacks tests and benches share
 *   floor 7  cli/  scripts/  bench/
 *   floor 8  bin/
 *
 * workflows/ is the exception to "anything lower": Temporal replays it in a sandbox, so it takes
 * only domain/ and workflows/, and activities/ as types (the activity signatures it proxies).
 *
 * Before these rules four arrows ran back up and one circle stood (issue 31), each now turned:
 *   infra/runtime.ts -> workers/run-workers.ts     openRuntime takes the worker starter from cli/
 *   activities/types.ts -> workflows/messages.ts   CrawlSummary lives in domain/crawl-messages.ts
 *   db/pglite-database.ts -> infra/logger.ts       the socket door's log is handed in by its opener
 *                                                  (the free-port import the issue names was gone)
 *   api/routes/crawl-routes.ts -> cli/crawl-command.ts   both build specs in domain/crawl-request.ts
 *   activities/types.ts <-> activities/page-batches.ts   the batch shapes live in types.ts
 *
 * test/ holds only test files: nothing outside it imports them (shared helpers are in testbed/).
 * Product folders never import testbed/, bench/ or scripts/.
 */

const FLOORS = [
  ['domain', 'db'],
  ['infra', 'extract', 'report'],
  ['embed'],
  ['activities', 'search'],
  ['workflows', 'export', 'workers', 'mcp'],
  ['api', 'testbed'],
  ['cli', 'scripts', 'bench'],
  ['bin'],
];

/** Why each folder stands where it does: said in the rule a violation names. */
const WHY = {
  domain:
    'domain/ is pure logic workflows and activities share; it imports no other folder, so workflow code stays deterministic',
  db: 'db/ is the store at the bottom: infra/, activities/ and the rest build on it, never the other way',
  infra:
    'infra/ runs services (Temporal, Postgres) and logging for the folders above; it never reaches up to workers/, cli/ or api/',
  extract: 'extract/ turns HTML into text and Markdown with no store, Temporal or network',
  report: 'report/ reads the store only',
  embed: 'embed/ loads and runs the model; the activities and search above it call it',
  activities:
    'activities/ are the I/O steps workflows call; they import no workflows/ code, not even types (shared shapes live in domain/)',
  search: 'search/ queries the store and the embedder; api/ and cli/ call it',
  workflows: 'workflows/ orchestrate; see workflows-deterministic for what they may import',
  export: 'export/ writes the corpus out through the activities it reuses; nothing below it exports',
  workers: 'workers/ host activities and workflows; only the entry points above start them',
  mcp: 'mcp/ is the MCP server both entry points serve (api/ at /mcp, cli/ on stdio), so it stands below both and imports neither; it reads the store and starts crawls through infra/, never workflows/ code',
  api: 'api/ is an entry point beside the CLI, so it never imports cli/: shared pieces live below both',
  testbed: 'testbed/ serves tests and benches; nothing in the product depends on it',
  cli: 'cli/ is the top of the product: bin/ alone imports it',
  scripts: 'scripts/ are tools beside the product: nothing imports them',
  bench: 'bench/ measures the product: nothing imports it',
  bin: 'bin/ starts the CLI',
};

const PRODUCT = [
  'activities',
  'api',
  'bin',
  'cli',
  'db',
  'domain',
  'embed',
  'export',
  'extract',
  'infra',
  'mcp',
  'report',
  'search',
  'workers',
  'workflows',
];
const ALL = [...FLOORS.flat(), 'test'];

const under = (folders) => `^(${folders.join('|')})/`;

const floorRules = FLOORS.flatMap((floor, index) =>
  floor.map((folder) => {
    const same = floor.filter((other) => other !== folder);
    const above = FLOORS.slice(index + 1).flat();
    return {
      name: `floor-${index + 1}-${folder}`,
      comment: `${WHY[folder]}. ${folder}/ stands on floor ${index + 1}: it imports only folders on lower floors.`,
      severity: 'error',
      from: { path: `^${folder}/` },
      to: { path: under([...same, ...above]) },
    };
  }),
);

module.exports = {
  forbidden: [
    ...floorRules,
    {
      name: 'workflows-deterministic',
      comment:
        'Temporal replays workflow code in a sandbox: it imports only domain/ and workflows/, and activities/ as types ' +
        '(the signatures proxyActivities needs); anything else could do I/O or break replay of recorded histories.',
      severity: 'error',
      from: { path: '^workflows/' },
      to: { path: under(ALL.filter((folder) => !['domain', 'workflows', 'activities'].includes(folder))) },
    },
    {
      name: 'workflows-take-activities-as-types',
      comment:
        'workflows/ may name activity signatures (import type) but never load activity code: it would run in the sandbox.',
      severity: 'error',
      from: { path: '^workflows/' },
      to: { path: '^activities/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'pure-code-no-node-builtins',
      comment:
        "domain/ and workflows/ run inside Temporal's workflow sandbox and in pure tests: no fs, net, child_process or other Node built-ins.",
      severity: 'error',
      from: { path: '^(domain|workflows)/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'workflows-npm-sandbox',
      comment:
        "The only packages workflow code loads itself are Temporal's workflow-safe ones; the rest reach it through domain/.",
      severity: 'error',
      from: { path: '^workflows/' },
      to: {
        dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown'],
        pathNot: '^node_modules/@temporalio/(workflow|common)/',
      },
    },
    {
      name: 'no-test-imports',
      comment:
        'test/ holds test files only; bench/, scripts/ and the product take shared servers and stacks from testbed/.',
      severity: 'error',
      from: { pathNot: '^test/' },
      to: { path: '^test/' },
    },
    {
      name: 'product-not-on-test-tools',
      comment:
        'The product ships without testbed/, bench/ and scripts/: a product import of them would fail in a deployment.',
      severity: 'error',
      from: { path: under(PRODUCT) },
      to: { path: under(['testbed', 'bench', 'scripts']) },
    },
    {
      name: 'product-declared-packages',
      comment:
        "The product loads only packages package.json names: another package's dependency can move or vanish on a fresh npm ci.",
      severity: 'error',
      from: { path: under(PRODUCT) },
      to: { dependencyTypes: ['npm-no-pkg', 'npm-unknown'] },
    },
    {
      name: 'product-no-dev-packages',
      comment:
        'docker/ installs with --omit=dev: the product loads no devDependency at run time (type-only imports are erased).',
      severity: 'error',
      from: { path: under(PRODUCT) },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'not-to-unresolvable',
      comment:
        'An import that resolves to nothing fails at run time, and tsc does not read the .js and .mjs files. The Crawlee reference crawl runs from a scratch folder that holds its package.',
      severity: 'error',
      from: { pathNot: '^bench/lib/crawlee-crawl[.]mjs$' },
      to: { couldNotResolve: true },
    },
    {
      name: 'no-circular',
      comment: 'A circle of imports has no floor order: one side must move its shared piece down.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    // Run on `.`: everything but dot-folders (.tools, .gleaner), build output, data and documents.
    exclude: { path: '^([.][^./]|(dist|docs|docker|fixtures|patches|coverage|test/fixtures|test/golden)/)' },
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count as arrows (tsc drops them, but they still tie the layers together),
    // and the rules can tell them apart.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // node_modules may be a symlink (worktrees share one): keep npm paths under node_modules/.
    preserveSymlinks: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.mts', '.js', '.mjs', '.cjs', '.d.ts'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
