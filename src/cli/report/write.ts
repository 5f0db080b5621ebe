import { dotToSvg } from '../../visualize/index.js';
import { checkWritable, readQuestions, writePage } from '../batch/input.js';
import { readResultLines, reportModel } from './model.js';
import { renderReport } from './page.js';

/** `booth report` and `booth batch --report`: a results file as one HTML page. */

/** The results file holds no line that is a result: there is nothing to report. */
export class NoResultsError extends Error {
  override readonly name = 'NoResultsError';

  constructor(file: string) {
    super(`${file} holds no result lines: give the -o file of a booth batch (see the warnings above for the lines skipped)`);
  }
}

export interface ReportFiles {
  /** The results JSONL, as booth batch writes it. */
  readonly results: string;
  /** The page to write. */
  readonly page: string;
  /** The questions file, for the question of each id; null to show answers only. */
  readonly questions: string | null;
  /** A result line skipped. */
  readonly warn: (message: string) => void;
}

/** Writes the report of `files.results` to `files.page`; returns how many questions it holds. */
export async function writeReport({ results, page, questions, warn }: ReportFiles): Promise<number> {
  checkWritable('report', page, [results, questions]);
  const lines = readResultLines(results, warn);
  if (lines.length === 0) throw new NoResultsError(results);
  // Only the question's text is read here: a line of the questions file it cannot use was
  // warned about by the batch that read it, and only leaves its result without a question.
  const asked = new Map(questions === null ? [] : readQuestions(questions, () => undefined).map((q) => [String(q.id), q.prompt] as const));
  const model = reportModel(results, lines, asked);
  const svgs: string[] = [];
  for (const dot of model.paths) svgs.push(await dotToSvg(dot));
  writePage('report', page, renderReport(model, svgs));
  return lines.length;
}
