#!/usr/bin/env bash
# One-time setup on a fresh machine (Node 20, offline but for the npm registry and Debian packages):
# pnpm, the native build of better-sqlite3, the workspace install, and Chromium for the inspector test.
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
