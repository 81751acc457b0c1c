/**
 * The environment a helper process gets: an allowlist, never a copy of ours. gleaner's own
 * environment holds secrets (GLEANER_LLM_API_KEY, DATABASE_URL with its password,
 * GLEANER_API_TOKEN, cloud credentials) that a Temporal dev server or a watchdog shell has no use
 * for, and a child's environment is readable in /proc by its user and kept in its crash dumps.
 */

/** What any program needs to find its tools, its home, temp space, locale and time zone. */
const BASE_NAMES = new Set(['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'TMPDIR', 'TZ', 'LANG', 'LANGUAGE']);
const BASE_PREFIXES = ['LC_'];

/**
 * `env` reduced to the base names plus `extraNames` (exact names, or prefixes ending in `*`).
 * Values never come from anywhere but `env`. `withBase: false` keeps `extraNames` alone, for a
 * child that must not even learn who runs it (the browser, whose pages are strangers' code).
 */
export function allowlistedEnv(
  env: NodeJS.ProcessEnv,
  extraNames: readonly string[] = [],
  { withBase = true }: { withBase?: boolean } = {},
): Record<string, string> {
  const exact = new Set([
    ...(withBase ? BASE_NAMES : []),
    ...extraNames.filter((name) => !name.endsWith('*')),
  ]);
  const prefixes = [
    ...(withBase ? BASE_PREFIXES : []),
    ...extraNames.filter((name) => name.endsWith('*')).map((name) => name.slice(0, -1)),
  ];
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (exact.has(name) || prefixes.some((prefix) => name.startsWith(prefix))) kept[name] = value;
  }
  return kept;
}
