/**
 * Optional peer dependencies (vega and vega-lite for `calibrate --svg`, ajv for `--schema` and
 * ajv-formats for its schemas' `format`,
 * OpenTelemetry for `telemetry` and `--otel`) are loaded only when an option or a flag needs
 * them, so a plain install stays small. When one is absent, Booth names what installs it
 * rather than showing Node's resolution error.
 */

/**
 * Whether `error` is Node failing to find the package `name` itself. A module missing
 * inside an installed package (a version without that file) is a different fault, and
 * the caller rethrows it as it is.
 */
export function isMissingPackage(error: unknown, name: string): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  const message = String((error as { message?: unknown } | null)?.message ?? '');
  return (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && message.includes(`'${name}'`);
}
