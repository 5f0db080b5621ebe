#!/usr/bin/env bash
# Packs Booth and type-checks a consumer project against it, with the xstate peer floor.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
tarball="$(cd "$root" && npm pack --silent --pack-destination "$work" | tail -n 1)"
floor="$(node -p "require('$root/package.json').peerDependencies.xstate.replace(/^\\^/, '')")"
typescript="$(node -p "require('$root/package.json').devDependencies.typescript")"
node_types="$(node -p "require('$root/package.json').devDependencies['@types/node']")"
cp "$root/.ci/consumer/consumer.ts" "$work/"
cd "$work"
cat > package.json <<JSON
{ "name": "consumer", "private": true, "type": "module",
  "dependencies": { "boothjs": "file:./$tarball", "xstate": "$floor", "typescript": "$typescript", "@types/node": "$node_types" } }
JSON
cat > tsconfig.json <<JSON
{ "compilerOptions": { "strict": true, "skipLibCheck": false, "noEmit": true, "module": "nodenext",
  "moduleResolution": "nodenext", "target": "es2022", "types": ["node"] }, "files": ["consumer.ts"] }
JSON
npm install --silent --no-audit --no-fund >/dev/null
npx tsc -p tsconfig.json
echo "consumer: a project on xstate $floor type-checks against the packed package (skipLibCheck false)"
