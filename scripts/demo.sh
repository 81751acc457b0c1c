#!/usr/bin/env bash
# Quick start: crawl on the embedded default. With no argument it serves the bundled skopt-0.9
# documentation (156 pages, fixtures/sites) on 127.0.0.1, crawls and indexes it, and searches it;
# with URLs it crawls those. Extra flags after the URLs go to `gleaner crawl` (e.g. --max-pages 50).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup.sh >&2

if [ "$#" -gt 0 ] && [[ "$1" != -* ]]; then
  exec node bin/gleaner.js crawl --wait "$@"
fi

site_log="$(mktemp)"
# One node process (not npx → tsx → node), so the trap below stops the server itself.
node --import tsx scripts/serve-site.ts skopt-0.9 >"$site_log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -f "$site_log"' EXIT
for _ in $(seq 1 100); do
  url="$(grep -m1 '^http' "$site_log" || true)"
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "${url:-}" ] || { cat "$site_log" >&2; echo "could not serve the demo site" >&2; exit 1; }
echo "[demo] serving skopt-0.9 at $url" >&2
node bin/gleaner.js crawl "$url" --allow-host 127.0.0.1 --delay-ms 100 --wait "$@"
query="how do I stop the optimization when a time budget runs out"
echo "[demo] gleaner search \"$query\" --k 5" >&2
node bin/gleaner.js search "$query" --k 5
