import { createHash } from 'node:crypto';
import { readSampleSettings, sampling as sampledRequest } from '../../adapters/request.js';
import { readBaseURL } from '../../adapters/openai-compatible.js';
import { type ConfidenceSource, confidenceSourceFor } from '../../decide/agreement.js';
import { checkLineRecord } from '../../results/stored.js';
import { readSchemaText } from '../json-schema.js';
import { quotedText } from '../../util/values.js';
import { ownVersion } from '../version.js';
import { cascadeOf, mostSamples, type SamplesFlag, samplesText, sampling, type SpendFlags } from '../spend-flags.js';

/**
 * What a `booth batch` line records about how it was made, and what a rerun into the same
 * output compares with it before any call: results judged two ways must not end up in one
 * file looking alike.
 */

/**
 * `run` of a result line, beside the library's `settings`: what else the line was made with.
 * Nothing here can hold a secret: the endpoint is its host alone, and the schema and the
 * system prompt are digests.
 */
export interface RunRecord {
  /** Booth's version. */
  readonly booth: string;
  readonly model: string;
  /** The endpoint's host and port, from --base-url: never its user, password, path or query. */
  readonly host: string;
  /** `sha256:` of the --schema file's JSON, or null without one. */
  readonly schema: string | null;
  /** `sha256:` of the system prompt, or null without one. */
  readonly system: string | null;
  /** The temperature the calls were sent (a sample's, when sampling); null when none was sent: the endpoint's default. */
  readonly temperature: number | null;
  /** The seed sent with each call (a sample k: seed + k); null when none was sent. */
  readonly seed: number | null;
  /**
   * The cascade's next models, in order, each by its name and its endpoint's host (as `host`):
   * present only when there is one. A line that has `run` without it was made without a
   * cascade (`run` was written before cascades were), so the two are told apart on a rerun.
   */
  readonly escalate?: readonly { readonly model: string; readonly host: string }[];
  /**
   * `--samples` in its adaptive form, as written (`max=5,stop=decided`): present only with it.
   * The result's `settings.samples` is then the most an attempt asks, as a fixed `--samples 5`
   * would say; this tells the two apart. A line with `run` and without it gathered a fixed K.
   */
  readonly samples?: string;
}

/** The flags a record is made of: `booth batch`'s and `booth worker`'s endpoint flags. */
export interface RecordedFlags extends SpendFlags {
  readonly baseUrl: string;
  readonly model: string;
  readonly threshold: number;
  readonly maxRetries: number;
  readonly samples: SamplesFlag;
  readonly confidenceFrom?: ConfidenceSource | undefined;
  /** The --schema file's path. */
  readonly schema?: string | undefined;
  readonly system?: string | undefined;
  readonly temperature?: number | undefined;
  readonly sampleTemperature?: number | undefined;
  readonly seed?: number | undefined;
}

/** How a record names a text it must not hold: `sha256:` and the hex digest. */
export const sha256 = (text: string): string => `sha256:${createHash('sha256').update(text).digest('hex')}`;

/**
 * The record of a run with these flags. The temperature and seed are the ones the adapter
 * sends, by its own rule: with samples every call is a sample's (`--sample-temperature`,
 * default 1, and seeds from 0; sample 0's are recorded), without them `--temperature` and
 * `--seed` as given; so flags that send the same requests make the same record. The schema counts by its JSON, not its path
 * or white space.
 */
export function runRecord(flags: RecordedFlags): RunRecord {
  const sent = sampledRequest(readSampleSettings(flags), sampling(flags.samples) ? { sample: 0 } : {});
  const [, ...escalations] = cascadeOf(flags);
  return {
    booth: ownVersion(),
    model: flags.model,
    host: readBaseURL(flags.baseUrl).host,
    schema: flags.schema === undefined ? null : sha256(JSON.stringify(JSON.parse(readSchemaText(flags.schema)))),
    system: flags.system === undefined ? null : sha256(flags.system),
    temperature: sent.temperature ?? null,
    seed: sent.seed ?? null,
    ...(escalations.length === 0 ? {} : { escalate: escalations.map((step) => ({ model: step.model, host: step.host })) }),
    ...(typeof flags.samples === 'number' ? {} : { samples: samplesText(flags.samples) }),
  };
}

/** What a rerun's lines are compared on: the record, and the settings of `settings` that decide a verdict. */
interface Compared {
  readonly run: RunRecord;
  readonly threshold: number;
  readonly maxRetries: number;
  /** A number, or the adaptive form as `--samples` writes it. */
  readonly samples: Value;
  readonly confidenceFrom: ConfidenceSource;
}

/** An earlier line's `settings` and `run`, once checked: either may be absent from a line written before it was. */
interface Earlier {
  readonly settings?: { readonly threshold: number; readonly maxRetries: number; readonly schema: boolean; readonly samples?: unknown; readonly confidenceFrom?: ConfidenceSource } | null;
  readonly run?: RunRecord;
}

type Value = string | number | null;

/**
 * Each setting a rerun compares: how it is named, its value in an earlier line (undefined
 * when the line does not say: unknown, never a difference), and in this run. `private`
 * ones are shown by digest, never their text.
 *
 * `--timeout-ms` and `--call-retries` are not compared: they decide how long a call may take
 * and how often a failed one is tried again, not how a reply is judged, and the questions
 * whose every call failed are checked again on a rerun anyway. Booth's own version is not
 * compared either (see docs/cli.md).
 */
const COMPARED: ReadonlyArray<{ readonly name: string; readonly was: (line: Earlier) => Value | undefined; readonly now: (current: Compared) => Value; readonly private?: true }> = [
  { name: '--model', was: (line) => line.run?.model, now: (current) => current.run.model },
  { name: 'the host of --base-url', was: (line) => line.run?.host, now: (current) => current.run.host },
  { name: '--threshold', was: (line) => line.settings?.threshold, now: (current) => current.threshold },
  { name: '--max-retries', was: (line) => line.settings?.maxRetries, now: (current) => current.maxRetries },
  // The adaptive form is in `run`; a line with `run` and without it gathered `settings.samples` each attempt.
  { name: '--samples', was: (line) => line.run?.samples ?? samplesValue(line.settings?.samples), now: (current) => current.samples },
  { name: '--confidence-from', was: (line) => line.settings?.confidenceFrom, now: (current) => current.confidenceFrom },
  // A line made before `run` was written still says whether a schema judged it.
  { name: '--schema', was: (line) => (line.run ? line.run.schema : line.settings?.schema === false ? null : undefined), now: (current) => current.run.schema, private: true },
  { name: 'the system prompt (--system, --system-file)', was: (line) => line.run?.system, now: (current) => current.run.system, private: true },
  { name: 'the temperature sent (--temperature, --sample-temperature)', was: (line) => line.run?.temperature, now: (current) => current.run.temperature },
  { name: '--seed', was: (line) => line.run?.seed, now: (current) => current.run.seed },
  { name: 'the cascade (--escalate-model, --escalate-base-url)', was: (line) => (line.run === undefined ? undefined : escalationValue(line.run)), now: (current) => escalationValue(current.run) },
];

/** A record's cascade as a rerun compares it: `model@host` in order; null without one. */
function escalationValue(run: RunRecord): string | null {
  const steps = run.escalate ?? [];
  return steps.length === 0 ? null : steps.map((step) => `${step.model}@${step.host}`).join(', ');
}

/** `settings.samples` of a line as compared: a number (checked by checkLineRecord), or undefined when absent. */
function samplesValue(samples: unknown): Value | undefined {
  return typeof samples === 'number' ? samples : undefined;
}

/**
 * A value as a message shows it: digests shortened, strings as quotedText shows them, at most
 * 80 characters long (a model name read from a file may hold anything, at any length: terminal
 * escapes and bidi overrides included).
 */
function shown(value: Value, isPrivate: boolean): string {
  if (value === null) return 'none';
  if (isPrivate) return `${String(value).slice(0, 'sha256:'.length + 12)}…`;
  if (typeof value === 'number') return String(value);
  return quotedText(value, 80);
}

/** A rerun into an output whose lines were made with other settings, refused before any call; the CLI makes it a usage error. */
export class RunChangedError extends Error {
  override readonly name = 'RunChangedError';
}

/** A result line whose `settings` or `run` is not what Booth writes: the output cannot be compared with. */
export class LineRecordError extends Error {
  override readonly name = 'LineRecordError';
}

/**
 * The comparison of a rerun's settings with the lines already in its output, line by line.
 * A line made otherwise is checked again with `rerunChanged` (its question is redone and its
 * line replaced); without it, the batch is refused once every line is read, naming each
 * difference. A line that does not record a setting (written by a Booth before it did) is
 * taken as it is: only a known difference refuses.
 */
export class RerunCheck {
  readonly #now: Compared;
  readonly #rerunChanged: boolean;
  /** `name\u0000old\u0000new` → lines, for the refusal. */
  readonly #differences = new Map<string, { readonly text: string; lines: number }>();
  /** Lines made otherwise. */
  #changed = 0;
  #unknown = 0;

  /** What a refusal tells to do instead; by default, `--rerun-changed` or another `-o`. */
  readonly #fix: ((changed: number) => string) | null;

  constructor(flags: RecordedFlags, run: RunRecord, rerunChanged: boolean, fix: ((changed: number) => string) | null = null) {
    this.#fix = fix;
    this.#now = {
      run,
      threshold: flags.threshold,
      maxRetries: flags.maxRetries,
      samples: typeof flags.samples === 'number' ? flags.samples : samplesText(flags.samples),
      confidenceFrom: confidenceSourceFor(mostSamples(flags.samples), flags.confidenceFrom),
    };
    this.#rerunChanged = rerunChanged;
  }

  /**
   * Whether the earlier line `row`, at `where` (`file:line`), is to be checked again: true
   * only with `rerunChanged`, for a line made otherwise. A line whose `settings` or `run` is
   * not what Booth writes is a `LineRecordError` naming the field and the kind found, never its value.
   */
  redo(row: Record<string, unknown>, where: string): boolean {
    checkLineRecord(row, (problem) => {
      throw new LineRecordError(`${where}: its ${problem}, which Booth never writes; fix or delete that line (or give -o another file) before a rerun`);
    });
    const line = row as Earlier;
    if (line.run === undefined) this.#unknown += 1;
    let changed = false;
    for (const setting of COMPARED) {
      const was = setting.was(line);
      const now = setting.now(this.#now);
      if (was === undefined || was === now) continue;
      changed = true;
      const key = [setting.name, was, now].join('\u0000');
      const known = this.#differences.get(key);
      if (known) known.lines += 1;
      else this.#differences.set(key, { text: `${setting.name} ${shown(was, setting.private === true)} → ${shown(now, setting.private === true)}`, lines: 1 });
    }
    if (changed) this.#changed += 1;
    return changed && this.#rerunChanged;
  }

  /**
   * After the last line: refuses a rerun over lines made otherwise (a `RunChangedError`),
   * or says how many are checked again; says too how many lines did not record the model.
   */
  finish(file: string, warn: (message: string) => void): void {
    const changed = this.#changed;
    if (this.#unknown > 0) {
      warn(
        `${this.#unknown} result line${this.#unknown === 1 ? '' : 's'} of ${file} ${this.#unknown === 1 ? 'does' : 'do'} not record the model, endpoint or temperature (written by an older Booth): kept as ${this.#unknown === 1 ? 'it is' : 'they are'}, compared only on the settings ${this.#unknown === 1 ? 'it records' : 'they record'}`,
      );
    }
    if (changed === 0) return;
    const questions = `${changed} question${changed === 1 ? '' : 's'}`;
    if (this.#rerunChanged) return warn(`${questions} made with other settings ${changed === 1 ? 'is' : 'are'} checked again with this run's (--rerun-changed); ${changed === 1 ? 'its line is' : 'their lines are'} replaced`);
    const differences = [...this.#differences.values()];
    const listed = differences.slice(0, 6).map(({ text, lines }) => `${text} (${lines} line${lines === 1 ? '' : 's'})`);
    if (differences.length > listed.length) listed.push(`and ${differences.length - listed.length} more`);
    throw new RunChangedError(
      `${file} holds results of ${questions} made with other settings than this run's: ${listed.join('; ')}. ` +
        (this.#fix?.(changed) ??
          `Run again with --rerun-changed to check ${changed === 1 ? 'that question' : 'those questions'} again with the new settings (${changed === 1 ? 'its line is' : 'their lines are'} replaced), ` +
            'or give -o another file to keep both.'),
    );
  }
}
