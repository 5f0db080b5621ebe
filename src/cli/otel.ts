import { connect } from 'node:net';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-node';
import { CommanderError } from 'commander';
import type { TelemetryOptions } from '../telemetry/settings.js';
import { isMissingPackage } from '../util/optional-peers.js';
import { redactUrls, shownUrl } from '../util/urls.js';

/** What `--otel` needs besides Booth: OpenTelemetry's API, its Node SDK and its OTLP/HTTP exporter. */
export const OTEL_PACKAGES = ['@opentelemetry/api', '@opentelemetry/sdk-trace-node', '@opentelemetry/resources', '@opentelemetry/exporter-trace-otlp-http'] as const;

export interface OtelExport {
  /** The `telemetry` option for each check. */
  readonly telemetry: TelemetryOptions;
  /** Sends the spans still buffered; never rejects: a collector that cannot be reached is a warning. */
  shutdown(): Promise<void>;
}

/**
 * The `--otel` flag: a tracer provider of the command's own, exporting over OTLP/HTTP where
 * OpenTelemetry's environment says (`OTEL_EXPORTER_OTLP_ENDPOINT`, or its default
 * http://localhost:4318), as service `booth` unless `OTEL_SERVICE_NAME` names another.
 * The packages are optional: without them the flag is bad usage naming what installs them.
 */
export async function startOtel(model: string, usage: number, warn: (message: string) => void): Promise<OtelExport> {
  let modules;
  try {
    modules = await Promise.all([
      import('@opentelemetry/sdk-trace-node'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      // Unused here (the checks load it themselves), but its absence is bad usage now, before any call.
      import('@opentelemetry/api'),
    ]);
  } catch (error) {
    if (!OTEL_PACKAGES.some((name) => isMissingPackage(error, name))) throw error;
    throw new CommanderError(usage, 'booth.otel', `error: --otel needs OpenTelemetry's packages, which are optional: npm i ${OTEL_PACKAGES.join(' ')}`);
  }
  const [{ NodeTracerProvider, BatchSpanProcessor }, { detectResources, envDetector, resourceFromAttributes }, { OTLPTraceExporter }] = modules;
  const resource = resourceFromAttributes({ 'service.name': 'booth' }).merge(detectResources({ detectors: [envDetector] }));
  // OpenTelemetry's own variables set the export's time limit; without them a command waits at most 5 s for a collector.
  const configured = process.env['OTEL_EXPORTER_OTLP_TRACES_TIMEOUT'] ?? process.env['OTEL_EXPORTER_OTLP_TIMEOUT'];
  const endpoint = process.env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'] ?? process.env['OTEL_EXPORTER_OTLP_ENDPOINT'] ?? 'http://localhost:4318';
  let warned = false;
  const failed = (reason: string) => {
    if (warned) return;
    warned = true;
    // The endpoint may carry a key in its user part or query, as any URL Booth shows.
    warn(`--otel could not export the spans to ${shownUrl(endpoint)}: ${redactUrls(reason)}`);
  };
  const exporter = new CollectorGate(new OTLPTraceExporter(configured === undefined ? { timeoutMillis: 5_000 } : {}), endpoint, (error) =>
    failed(`${reasonOf(error)}; the spans are dropped while nothing answers there (start the collector, or set OTEL_EXPORTER_OTLP_ENDPOINT)`),
  );
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
  return {
    telemetry: { tracer: provider.getTracer('boothjs'), attributes: { 'gen_ai.request.model': model } },
    shutdown: () => provider.shutdown().catch((error: unknown) => failed(error instanceof Error ? error.message : String(error))),
  };
}

type ExportResult = Parameters<Parameters<SpanExporter['export']>[1]>[0];
/** ExportResultCode.FAILED of @opentelemetry/core, which the SDK uses but Booth does not import. */
const FAILED = 1 as ExportResult['code'];
/** How long a connection to the collector may take to open before the export is left to OTLP's own time limit. */
const PROBE_MS = 1_000;

/**
 * OTLP's exporter in front of a collector that may not be there. The exporter retries a
 * refused connection with backoff until its time limit (5 s), at every export, the one at the
 * end of the command too: with no collector running, every command ended 5 s late. A
 * refusal is known as soon as a connection is tried, so while the collector has not been
 * seen, each export first opens one TCP connection to it: refused (or an unknown host), the
 * spans are dropped at once and `unreachable` is told; accepted, the exporter sends them as
 * it would. One more try starts with the command, so a missing collector is told at once.
 * Once the collector is seen, exports go straight to it, until one fails.
 */
class CollectorGate implements SpanExporter {
  readonly #inner: SpanExporter;
  readonly #url: URL | null;
  readonly #unreachable: (error: Error) => void;
  #seen = false;

  constructor(inner: SpanExporter, endpoint: string, unreachable: (error: Error) => void) {
    this.#inner = inner;
    this.#unreachable = unreachable;
    let url: URL | null = null;
    try {
      url = new URL(endpoint);
    } catch {
      // OTLP's exporter reports an endpoint it cannot use: it is left to say so.
    }
    this.#url = url;
    // Only to tell at once: an export, perhaps much later, looks again.
    void this.#connect().then((error) => error && unreachable(error));
  }

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    if (this.#seen) return this.#send(spans, done);
    void this.#connect().then((error) => {
      if (error === null) {
        this.#seen = true;
        return this.#send(spans, done);
      }
      this.#unreachable(error);
      done({ code: FAILED, error });
    });
  }

  #send(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.#inner.export(spans, (result) => {
      // Any failure may be the collector gone: the next export looks before it waits on it.
      if (result.code === FAILED) this.#seen = false;
      done(result);
    });
  }

  /** Null once a TCP connection to the collector opened, or after PROBE_MS without an answer; the error when it was refused. */
  #connect(): Promise<Error | null> {
    const url = this.#url;
    if (url === null) return Promise.resolve(null);
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    return new Promise((resolve) => {
      // The brackets of an IPv6 address belong to the URL, not to the host to connect to.
      const socket = connect({ host: url.hostname.replace(/^\[|\]$/g, ''), port, timeout: PROBE_MS });
      const end = (error: Error | null) => {
        socket.destroy();
        resolve(error);
      };
      socket.once('connect', () => end(null));
      socket.once('timeout', () => end(null));
      socket.once('error', (error) => end(error));
    });
  }

  shutdown(): Promise<void> {
    return this.#inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.#inner.forceFlush?.() ?? Promise.resolve();
  }
}

/** An error's message; a host of several addresses (localhost: ::1 and 127.0.0.1) refused on each is an AggregateError without one. */
function reasonOf(error: Error): string {
  return error instanceof AggregateError && error.message === '' ? error.errors.map((each: unknown) => (each instanceof Error ? each.message : String(each))).join('; ') : error.message;
}
