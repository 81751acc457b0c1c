#!/usr/bin/env bash
# The whole test suite, as CI runs it: provision (idempotent), typecheck, lint, then every test
# on real parts — Temporal dev server, native Postgres + pgvector, PGlite, loopback HTTP servers.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup.sh
echo "[test] typecheck"
npx tsc --noEmit -p tsconfig.json
echo "[test] lint and format"
npm run lint
echo "[test] vitest"
npx vitest run "$@"
