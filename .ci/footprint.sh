#!/usr/bin/env bash
# Packs Booth, installs the tarball with xstate into a fresh app, and prints the install
# footprint: packages added and the commands put in node_modules/.bin. Fails above 10
# packages or on any command but `booth`. Then checks the optional peers: without the chart
# libraries `booth calibrate --svg` names the command that installs them, and with them it
# draws; without ajv `--schema` names `npm i ajv`, and with it the schema file is compiled.
# `boothjs/redis` loads without ioredis, which a plain install does not add; `booth worker` and
# `batch --queue` name `npm i bullmq ioredis` without them, and load them once installed.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
limit=10
tarball="$(cd "$root" && npm pack --silent --pack-destination "$work" | tail -n 1)"
pkg() { node -p "require('$root/package.json').$1"; }
# Runs the command after the first three arguments and requires its exit code and a phrase on
# its stderr, which it leaves in $said.
requires_exit() {
  local want="$1" phrase="$2" what="$3" code
  shift 3
  set +e
  said="$("$@" 2>&1 >/dev/null)"
  code=$?
  set -e
  if [ "$code" -ne "$want" ] || [[ "$said" != *"$phrase"* ]]; then
    echo "footprint: $what should exit $want saying '$phrase'; got $code: $said" >&2
    exit 1
  fi
}
xstate="$(pkg "devDependencies.xstate")"
mkdir "$work/app"
cd "$work/app"
echo '{ "name": "footprint", "private": true, "type": "module" }' > package.json
npm install --no-audit --no-fund --loglevel=error "../$tarball" "xstate@$xstate" >/dev/null

# Every package under node_modules, from npm's own record of the install.
mapfile -t packages < <(node -e '
  const lock = require("./node_modules/.package-lock.json");
  for (const path of Object.keys(lock.packages)) if (path) console.log(path.replace(/^.*node_modules\//, "") + "@" + lock.packages[path].version);
' | sort)
mapfile -t commands < <(ls node_modules/.bin 2>/dev/null | sort)
echo "footprint: npm i boothjs xstate adds ${#packages[@]} packages: ${packages[*]}"
echo "footprint: commands in node_modules/.bin: ${commands[*]:-(none)}"
echo "footprint: node_modules holds $(du -sh node_modules | cut -f1)"
if [ "${#packages[@]}" -gt "$limit" ]; then
  echo "footprint: more than $limit packages" >&2
  exit 1
fi
# boothjs/redis never loads a Redis client itself: with no ioredis installed it loads from both builds.
if [ -e node_modules/ioredis ]; then
  echo "footprint: a plain install should not add ioredis" >&2
  exit 1
fi
node --input-type=module -e "
  import { createRequire } from 'node:module';
  const require = createRequire(process.cwd() + '/');
  const client = { get: async () => null, set: async () => 'OK', del: async () => 0 };
  for (const { redisStore } of [await import('boothjs/redis'), require('boothjs/redis')]) redisStore(client).locate('k');
"
echo "footprint: without ioredis, boothjs/redis loads from both builds"
foreign=()
for command in "${commands[@]}"; do [ "$command" = booth ] || foreign+=("$command"); done
if [ "${#foreign[@]}" -gt 0 ]; then
  echo "footprint: commands other than booth: ${foreign[*]}" >&2
  exit 1
fi

# The chart's libraries are optional: asked for, they are named with the command that installs them.
printf '%s\n' '{"status":"VERIFIED","confidence":0.9,"correct":true}' '{"status":"UNCERTAIN","confidence":0.3,"correct":false}' > labelled.jsonl
requires_exit 1 "npm i vega vega-lite" "without vega, booth calibrate --svg" ./node_modules/.bin/booth calibrate labelled.jsonl --svg chart.svg
echo "footprint: without vega, booth calibrate --svg says: $said"
npm install --no-audit --no-fund --loglevel=error "vega@$(pkg "devDependencies.vega")" "vega-lite@$(pkg "devDependencies['vega-lite']")" >/dev/null
./node_modules/.bin/booth calibrate labelled.jsonl --svg chart.svg >/dev/null
grep -q '<svg' chart.svg
echo "footprint: after npm i vega vega-lite, booth calibrate --svg draws the chart"

# Ajv is optional too. A schema Ajv refuses ends the command before any call, so no endpoint is needed.
echo '{"type": 12}' > answer.schema.json
ask_with_schema() { ./node_modules/.bin/booth ask q --base-url http://127.0.0.1:9/v1 --model m --schema answer.schema.json; }
requires_exit 2 "npm i ajv" "without ajv, booth ask --schema" ask_with_schema
echo "footprint: without ajv, booth ask --schema says: $said"
npm install --no-audit --no-fund --loglevel=error "ajv@$(pkg "devDependencies.ajv")" >/dev/null
requires_exit 2 "that Ajv can compile: schema is invalid" "after npm i ajv, booth ask --schema (compiling the schema and refusing it)" ask_with_schema
echo "footprint: after npm i ajv, booth ask --schema compiles the schema file: $said"

# Telemetry is optional too: without @opentelemetry/api a check runs from both builds (nothing
# imports the package), and one that asks for telemetry names what installs it; with it, spans are made.
cat > telemetry.cjs <<'JS'
const reply = () => '{"answer": "4", "confidence": 0.9}';
module.exports = (booth, name) => {
  if (booth.check(reply, 'q').status !== 'VERIFIED') throw new Error(`${name}: a check without telemetry failed`);
  try {
    return booth.check(reply, 'q', { telemetry: true }).status;
  } catch (error) {
    return error.message;
  }
};
JS
telemetry() { node --input-type=module -e "
  import { createRequire } from 'node:module';
  const require = createRequire(process.cwd() + '/');
  const run = require('./telemetry.cjs');
  console.log(run(await import('boothjs'), 'esm') + ' | ' + run(require('boothjs'), 'cjs'));
"; }
message="$(telemetry)"
if [[ "$message" != *"npm install @opentelemetry/api"*"|"*"npm install @opentelemetry/api"* ]]; then
  echo "footprint: without @opentelemetry/api, telemetry: true should name 'npm install @opentelemetry/api' in both builds; got: $message" >&2
  exit 1
fi
echo "footprint: without @opentelemetry/api, checks run and telemetry: true says: ${message%% |*}"
npm install --no-audit --no-fund --loglevel=error "@opentelemetry/api@$(pkg "devDependencies['@opentelemetry/api']")" >/dev/null
message="$(telemetry)"
if [ "$message" != "VERIFIED | VERIFIED" ]; then
  echo "footprint: after npm i @opentelemetry/api, telemetry: true should run in both builds; got: $message" >&2
  exit 1
fi
echo "footprint: after npm i @opentelemetry/api, both builds run a check with telemetry on"

# `booth ask --otel` from the packed command: without OpenTelemetry's SDK it names what installs it,
# before any call; with it the command runs (no endpoint and no collector here: a failed call, a warning).
otel_ask() { OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:9 ./node_modules/.bin/booth ask q --base-url http://127.0.0.1:9/v1 --model m --otel; }
requires_exit 2 "npm i @opentelemetry/api @opentelemetry/sdk-trace-node" "without OpenTelemetry's SDK, booth ask --otel" otel_ask
echo "footprint: without OpenTelemetry's SDK, booth ask --otel says: $said"
otel_versions=()
for name in @opentelemetry/sdk-trace-node @opentelemetry/resources @opentelemetry/exporter-trace-otlp-http; do
  otel_versions+=("$name@$(pkg "devDependencies['$name']")")
done
npm install --no-audit --no-fund --loglevel=error "${otel_versions[@]}" >/dev/null
# Exit 3: there is no endpoint, so every model call failed (an outage); the warning says no collector answered.
requires_exit 3 "warning: --otel could not export the spans" "with OpenTelemetry's SDK, booth ask --otel" otel_ask
echo "footprint: with OpenTelemetry's SDK installed, booth ask --otel runs and exports (no collector here: a warning)"

# Queued batches need BullMQ and ioredis, optional too: without them `booth worker` and `batch --queue`
# name what installs them, before touching Redis; with them the packed command loads both and
# reaches for Redis (none here, on a closed port: exit 1 naming the address).
worker_cmd() { ./node_modules/.bin/booth worker --queue redis://127.0.0.1:9/0 --name run-1 --base-url http://127.0.0.1:9/v1 --model m; }
queued_batch() { ./node_modules/.bin/booth batch labelled.jsonl --queue redis://127.0.0.1:9/0 --name run-1 -o out.jsonl; }
requires_exit 2 "npm i bullmq ioredis" "without bullmq, booth worker" worker_cmd
echo "footprint: without bullmq, booth worker says: $said"
requires_exit 2 "npm i bullmq ioredis" "without bullmq, booth batch --queue" queued_batch
npm install --no-audit --no-fund --loglevel=error "bullmq@$(pkg "devDependencies.bullmq")" "ioredis@$(pkg "devDependencies.ioredis")" >/dev/null
requires_exit 1 "cannot reach Redis at redis://127.0.0.1:9/0" "with bullmq, booth worker" worker_cmd
echo "footprint: with bullmq and ioredis installed, booth worker loads them and says: $said"
