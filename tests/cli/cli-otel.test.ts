import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { envelope } from '../fixtures/helpers.js';
import { batchFiles, booth, spawnBooth, useProvider } from '../fixtures/booth-process.js';
import { closedPort } from '../fixtures/closed-port.js';
import { openAIBody } from '../fixtures/provider-server.js';

/**
 * `--otel`: the command exports its spans over OTLP/HTTP (JSON) to OTEL_EXPORTER_OTLP_ENDPOINT.
 * A loopback collector receives them, as Jaeger, Tempo or Honeycomb's collector would.
 */

const server = useProvider();

interface OtlpSpan {
  readonly name: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly attributes: ReadonlyArray<{ key: string; value: Record<string, unknown> }>;
}
interface OtlpRequest {
  readonly resourceSpans: ReadonlyArray<{
    resource: { attributes: ReadonlyArray<{ key: string; value: Record<string, unknown> }> };
    scopeSpans: ReadonlyArray<{ spans: readonly OtlpSpan[] }>;
  }>;
}

const collector = { url: '', requests: [] as OtlpRequest[], close: async () => {} };
beforeAll(async () => {
  const http = createServer((request, response) => {
    let raw = '';
    request.on('data', (chunk: Buffer) => (raw += chunk));
    request.on('end', () => {
      if (request.url === '/v1/traces') collector.requests.push(JSON.parse(raw) as OtlpRequest);
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  collector.url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  collector.close = () => new Promise((resolve) => http.close(() => resolve()));
});
afterAll(() => collector.close());
beforeEach(() => void (collector.requests.length = 0));

const env = () => ({ ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_SERVICE_NAME: 'triage-bot' });
const spans = () => collector.requests.flatMap((r) => r.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((s) => s.spans)));
const attribute = (span: OtlpSpan | undefined, key: string) => {
  const value = span?.attributes.find((a) => a.key === key)?.value;
  return value === undefined ? undefined : Object.values(value)[0];
};
const billed = (text: string) => ({ body: { ...openAIBody(text), usage: { prompt_tokens: 120, completion_tokens: 8, total_tokens: 128 } } });

describe('booth ask --otel', () => {
  it('exports the check and its attempts, with the model, the status and the tokens', async () => {
    server.provider.script.push(billed(envelope('Lyon', 0.2)), billed(envelope('Paris', 0.9)));
    const run = await booth(['ask', 'Capital of France?', ...server.endpoint, '--otel'], undefined, env());
    expect(run.code).toBe(0);
    const all = spans();
    const check = all.find((span) => span.name === 'booth.check');
    const attempts = all.filter((span) => span.name === 'booth.attempt');
    expect(attribute(check, 'booth.status')).toBe('REPAIRED');
    expect(attribute(check, 'gen_ai.request.model')).toBe('test-model');
    expect(attempts.map((span) => span.parentSpanId)).toEqual([check?.spanId, check?.spanId]);
    expect(attempts.map((span) => attribute(span, 'gen_ai.usage.input_tokens'))).toEqual([120, 120]);
    expect(attribute(check, 'booth.usage.total_tokens')).toBe(256);
    const resource = collector.requests[0]?.resourceSpans[0]?.resource.attributes.find((a) => a.key === 'service.name');
    expect(resource?.value).toEqual({ stringValue: 'triage-bot' });
  });

  it('a collector that refuses the connection costs one warning, said at once, never the answer nor seconds', async () => {
    const port = await closedPort();
    const down = { ...env(), OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` };
    server.provider.script.push({ text: envelope('Paris', 0.9) });
    const plain = await booth(['ask', 'Capital of France?', ...server.endpoint], undefined, down);
    server.provider.script.push({ text: envelope('Paris', 0.9) });
    const run = await booth(['ask', 'Capital of France?', ...server.endpoint, '--otel'], undefined, down);
    console.log(`booth ask against a refusing collector: ${Math.round(run.ms)} ms with --otel, ${Math.round(plain.ms)} ms without`);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^status {6}VERIFIED\nanswer {6}Paris\n/);
    const warning = `warning: --otel could not export the spans to http://127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port}; the spans are dropped while nothing answers there (start the collector, or set OTEL_EXPORTER_OTLP_ENDPOINT)`;
    expect(run.stderr.split('\n').filter((line) => line.includes('--otel'))).toEqual([warning]);
    // OTLP's retries of the refused connection made it 5 s; now it costs loading OpenTelemetry's SDK.
    expect(run.ms - plain.ms).toBeLessThan(1_500);
  }, 30_000);

  it("the warning shows the collector's URL without its user, password or query", async () => {
    const port = await closedPort();
    const down = { ...env(), OTEL_EXPORTER_OTLP_ENDPOINT: `http://user:s3cretpw@127.0.0.1:${port}/v1/traces?api_key=SECRETKEY` };
    server.provider.script.push({ text: envelope('Paris', 0.9) });
    const run = await booth(['ask', 'Capital of France?', ...server.endpoint, '--otel'], undefined, down);
    expect(run.stderr).toContain(`warning: --otel could not export the spans to http://***:***@127.0.0.1:${port}/v1/traces?api_key=***: connect ECONNREFUSED`);
    expect(run.stderr).not.toMatch(/s3cretpw|SECRETKEY/);
  }, 30_000);

  it('the collector is looked for as the command starts: one that refuses is said before the answer comes', async () => {
    const down = { ...env(), OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${await closedPort()}` };
    server.provider.script.push({ text: envelope('Paris', 0.9), delayMs: 3_000 });
    const asking = spawnBooth(['ask', 'Capital of France?', ...server.endpoint, '--otel'], down);
    while (server.provider.received.length === 0) await sleep(20);
    for (const deadline = Date.now() + 2_500; !asking.said().includes('--otel could not export') && Date.now() < deadline; ) await sleep(20);
    expect(asking.said()).toContain('warning: --otel could not export the spans');
    expect((await asking.done).code).toBe(0);
  }, 30_000);

  it('a collector that comes up after a refusal gets the spans of the exports after it', async () => {
    server.provider.fallback = () => ({ text: envelope('Paris', 0.9) });
    const { input, output } = batchFiles(3);
    const port = await closedPort();
    // The refusal is seen as the batch starts; the collector then answers on that port.
    const late = createServer((request, response) => {
      let raw = '';
      request.on('data', (chunk: Buffer) => (raw += chunk));
      request.on('end', () => {
        collector.requests.push(JSON.parse(raw) as OtlpRequest);
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    const batch = spawnBooth(['batch', input, '-o', output, ...server.endpoint, '--otel'], { ...env(), OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` });
    for (const deadline = Date.now() + 20_000; !batch.said().includes('--otel could not export') && Date.now() < deadline; ) await sleep(20);
    await new Promise<void>((resolve) => late.listen(port, '127.0.0.1', resolve));
    try {
      expect((await batch.done).code).toBe(0);
      expect(spans().filter((span) => span.name === 'booth.check')).toHaveLength(3);
    } finally {
      late.closeAllConnections();
      await new Promise((resolve) => late.close(resolve));
    }
  }, 30_000);

  it('without the option nothing is exported', async () => {
    server.provider.script.push({ text: envelope('Paris', 0.9) });
    const run = await booth(['ask', 'q', ...server.endpoint], undefined, env());
    expect(run.code).toBe(0);
    expect(collector.requests).toEqual([]);
  });

  it('without OpenTelemetry\'s packages, --otel is bad usage naming the command that installs them, before any call', async () => {
    const hook = new URL('../fixtures/without-otel.mjs', import.meta.url).href;
    const hidden = { ...env(), NODE_OPTIONS: `${process.env['NODE_OPTIONS'] ?? ''} --import ${hook}`.trim() };
    const run = await booth(['ask', 'q', ...server.endpoint, '--otel'], undefined, hidden);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('error: --otel needs OpenTelemetry\'s packages, which are optional: npm i @opentelemetry/api @opentelemetry/sdk-trace-node @opentelemetry/resources @opentelemetry/exporter-trace-otlp-http');
    expect(server.provider.received).toEqual([]);
  });
});

describe('booth batch --otel', () => {
  it('exports one booth.check trace per question, all sent before the command exits', async () => {
    server.provider.fallback = () => ({ text: envelope('Paris', 0.9) });
    const { input, output } = batchFiles(5);
    const run = await booth(['batch', input, '-o', output, ...server.endpoint, '--otel', '--concurrency', '2'], undefined, env());
    expect(run.code).toBe(0);
    const checks = spans().filter((span) => span.name === 'booth.check');
    expect(checks).toHaveLength(5);
    expect(checks.every((span) => attribute(span, 'booth.status') === 'VERIFIED')).toBe(true);
  });
});
