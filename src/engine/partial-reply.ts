/** What `onPartial` is given as a streamed reply arrives. The verdict is not in it: it is held until the run decides. */
export interface PartialReply {
  /** The attempt the reply answers, from 0. */
  readonly attempt: number;
  /** With `samples` above 1: which sample. */
  readonly sample?: number;
  /** The model asked, when the run names its models (a cascade, or `modelName`). */
  readonly model?: string;
  /**
   * True on the first partial of a reply that replaces earlier text of the same call or
   * sample: a retry, a call retried, the next model of a cascade. A UI clears what it showed.
   */
  readonly replaces: boolean;
  /** The reply's `ambiguous`, once that member is complete; null before. */
  readonly ambiguous: boolean | null;
  /** The reply's readings, once the `interpretations` array is complete; null before. */
  readonly interpretations: readonly string[] | null;
  /** A string answer decoded so far; any other answer as its JSON text so far; null until the answer begins. */
  readonly answerSoFar: string | null;
  /** The reply's text so far, as the model wrote it. */
  readonly textSoFar: string;
}
