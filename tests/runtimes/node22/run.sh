#!/usr/bin/env bash
# The portable tests on Node 22: the binary tests/runtimes/node22 installs, never the node on PATH.
set -euo pipefail
cd "$(dirname "$0")/../../.."
node22=tests/runtimes/node22/node_modules/.bin/node
if [ ! -x "$node22" ]; then
  # Its binaries are published for Linux (x64, arm64) only: elsewhere the run is skipped, except in CI.
  echo "Node 22 is not installed here: run bash tests/runtimes/install.sh (linux x64 or arm64)." >&2
  if [ -n "${CI:-}" ]; then exit 1; fi
  echo "skipping the Node 22 run outside CI" >&2
  exit 0
fi
echo "Node $("$node22" --version) from $node22"
exec "$node22" node_modules/vitest/vitest.mjs run -c tests/config/vitest.node22.config.ts "$@"
