#!/usr/bin/env bash
# Installs the runtimes the tests run in (Node 22, and the other folders beside it that have a
# lock file), each from its own package-lock.json into its own folder, so none shadows the
# project's node. A folder whose install is as new as its lock file is left as it is: npm test
# calls this every time, and npm ci would reinstall from scratch.
set -euo pipefail
cd "$(dirname "$0")"
for lock in */package-lock.json; do
  folder="$(dirname "$lock")"
  installed="$folder/node_modules/.package-lock.json"
  if [ ! -e "$installed" ] || [ "$lock" -nt "$installed" ]; then
    echo "installing the runtimes of tests/runtimes/$folder from its lock file"
    npm ci --prefix "$folder" --no-audit --no-fund --loglevel=error
  fi
done
