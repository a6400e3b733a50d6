#!/usr/bin/env bash
# One-time setup on a fresh machine (Node 20, offline but for the npm registry and Debian packages):
# pnpm, the native build of better-sqlite3, the workspace install, Chromium for the inspector test, and
# the PostgreSQL server binaries the Postgres tests start a throwaway cluster with.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v pnpm >/dev/null 2>&1; then
  # corepack fails its signature check here; npm installs pnpm 10 directly.
  npm install --global pnpm@10.34.9
fi

# better-sqlite3 has no prebuilt binary offline; node-gyp builds it against the system Node headers.
export npm_config_nodedir=/usr

pnpm install --frozen-lockfile

# Headless Chromium for the example's inspector-page test (Debian's package; no browser download).
if ! command -v chromium >/dev/null 2>&1 && [ "${SKIP_CHROMIUM:-}" != "1" ]; then
  if [ "$(id -u)" = "0" ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "setup: chromium is missing; install Debian's chromium package to run the inspector test" >&2
  fi
fi

# PostgreSQL server binaries (initdb, pg_ctl) for the Postgres tests' throwaway cluster (Debian's package;
# its own cluster service is not needed: the tests run initdb in a temporary directory).
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && [ "${SKIP_POSTGRES:-}" != "1" ]; then
  if [ "$(id -u)" = "0" ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  else
    echo "setup: PostgreSQL is missing; install Debian's postgresql package to run the Postgres tests" >&2
  fi
fi
