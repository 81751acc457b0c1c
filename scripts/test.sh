#!/usr/bin/env bash
# The whole test suite, as CI runs it: provision (idempotent), typecheck, lint, then every test
# on real parts — Temporal dev server, native Postgres + pgvector, PGlite, loopback HTTP servers.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup.sh
# Typecheck and lint at the same time (two cores); each one's output is printed whole when it ends.
checks=$(mktemp -d)
trap 'rm -rf "$checks"' EXIT
npx tsc --noEmit -p tsconfig.json >"$checks/typecheck" 2>&1 &
typecheck=$!
npm run lint >"$checks/lint" 2>&1 &
lint=$!
failed=0
echo "[test] typecheck"
wait "$typecheck" || failed=1
cat "$checks/typecheck"
echo "[test] lint and format"
wait "$lint" || failed=1
cat "$checks/lint"
if [ "$failed" -ne 0 ]; then
  echo "[test] typecheck or lint failed" >&2
  exit 1
fi
echo "[test] vitest"
npx vitest run "$@"
