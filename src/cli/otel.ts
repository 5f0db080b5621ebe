import { CommanderError } from 'commander';
import type { TelemetryOptions } from '../telemetry/settings.js';
import { isMissingPackage } from '../util/optional-peers.js';

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
  const exporter = new OTLPTraceExporter(configured === undefined ? { timeoutMillis: 5_000 } : {});
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
  return {
    telemetry: { tracer: provider.getTracer('boothjs'), attributes: { 'gen_ai.request.model': model } },
    shutdown: () =>
      provider.shutdown().catch((error: unknown) => {
        const endpoint = process.env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'] ?? process.env['OTEL_EXPORTER_OTLP_ENDPOINT'] ?? 'http://localhost:4318';
        warn(`--otel could not export the spans to ${endpoint}: ${error instanceof Error ? error.message : String(error)}`);
      }),
  };
}
