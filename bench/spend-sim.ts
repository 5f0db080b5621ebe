/**
 * The simulated questions and models `npm run bench:spend` (bench/spend.ts) measures on.
 *
 * A seeded population of questions, each with a hidden true answer and a difficulty; two
 * models, a cheap one and a strong one at `priceRatio` times the price per token. How often
 * a model is right on a question follows a Rasch (one-parameter logistic) model, the usual
 * model of item response theory: P(right) = sigmoid(ability − difficulty), the difficulty
 * shared by both models, so a question hard for one is hard for the other. A wrong sample
 * picks one of the question's three wrong answers by weights of its own (usually one
 * tempting wrong answer), the same for both models. The self-reported confidence follows how
 * often the model gives that very answer — right or wrong, so a model that always gives the
 * same wrong answer says so confidently — plus a bias of the model on the question shared by
 * its samples, plus noise: it tells right from wrong only moderately, as verbalised
 * confidence does.
 *
 * Every call's outcome — answer, confidence, tokens, latency — is a pure function of
 * (seed, question, model, sample, attempt of that model), so fixed and adaptive sampling
 * draw the same sample i, and a cascade's strong model answers as the strong model alone does.
 */
import type { AsyncCallFn, CallInfo } from '../src/index.js';

/** mulberry32: a small, fast, seeded 32-bit PRNG; floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One 32-bit seed from several whole numbers (murmur3's finaliser over a running mix). */
export function seedOf(...parts: number[]): number {
  let h = 0x9e3779b9;
  for (const part of parts) {
    h = Math.imul(h ^ (part >>> 0), 0x85ebca6b);
    h = (h ^ (h >>> 13)) >>> 0;
    h = Math.imul(h, 0xc2b2ae35);
    h = (h ^ (h >>> 16)) >>> 0;
  }
  return h >>> 0;
}

/** A standard normal draw (Box–Muller). */
function normal(random: () => number): number {
  const u = 1 - random();
  const v = random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));
const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));

export type ModelName = 'cheap' | 'strong';

export interface SimParams {
  readonly seed: number;
  readonly questions: number;
  /** Share of hard questions. */
  readonly hardShare: number;
  /** Question difficulty on the Rasch scale: normal, by kind. */
  readonly easy: { readonly mean: number; readonly sd: number };
  readonly hard: { readonly mean: number; readonly sd: number };
  /** Each model's ability on the same scale. */
  readonly ability: Readonly<Record<ModelName, number>>;
  /**
   * Self-reported confidence of a sample: base + slope × (how often the model gives this
   * answer to this question) + rightBonus when it is right + the model's bias on the question
   * (questionNoise × N(0, 1), the same for every sample) + sampleNoise × N(0, 1), clamped to
   * [0.05, 0.99], two decimals.
   */
  readonly confidence: {
    readonly base: number;
    readonly slope: number;
    readonly rightBonus: number;
    readonly questionNoise: number;
    readonly sampleNoise: number;
  };
  /** The cheap model's dollars per million tokens; the strong model's are `priceRatio` times these. */
  readonly cheapPrice: { readonly inputPerMTok: number; readonly outputPerMTok: number };
  readonly priceRatio: number;
  /** A call's latency, in event-loop turns (setImmediate), drawn uniformly from 1 to this. */
  readonly maxLatencyTurns: number;
}

/**
 * The defaults, and why (docs/spend.md says the same, and tests/bench/spend-sim.test.ts checks it):
 * - 30 % hard questions; easy difficulty N(−2, 1), hard N(1, 1); abilities cheap 0.5, strong
 *   2.0. One cheap sample is then right on 89 % of easy questions' samples and 41 % of hard
 *   ones' (74 % overall), one strong sample on 97 % and 69 % (89 % overall): a wide gap, wider
 *   than MMLU's between a family's small and large model, the case a cascade is for.
 * - Confidence 0.6 + 0.3 × (share of the model's samples giving that answer), a bias per
 *   question and model of sd 0.15, noise of sd 0.08: means near 0.8, and an AUROC for right
 *   against wrong of about 0.76 (cheap) and 0.81 (strong) — better than the 0.5–0.6 Xiong et
 *   al. (ICLR 2024) measured for verbalised confidence on hard tasks, which favours a cascade
 *   that trusts it; the sensitivity table moves it.
 * - Prices: the cheap model at $0.15 / $0.60 per million input / output tokens (GPT-4o mini's
 *   list price), the strong at ten times that, the ratio.
 */
export const DEFAULT_PARAMS: SimParams = Object.freeze({
  seed: 30,
  questions: 2_000,
  hardShare: 0.3,
  easy: { mean: -2, sd: 1 },
  hard: { mean: 1, sd: 1 },
  ability: { cheap: 0.5, strong: 2.0 },
  confidence: { base: 0.6, slope: 0.3, rightBonus: 0, questionNoise: 0.15, sampleNoise: 0.08 },
  cheapPrice: { inputPerMTok: 0.15, outputPerMTok: 0.6 },
  priceRatio: 10,
  maxLatencyTurns: 20,
});

export interface Question {
  readonly index: number;
  readonly hard: boolean;
  readonly difficulty: number;
  /** What is asked: a sentence padded to a seeded length, so prompts have realistic token counts. */
  readonly text: string;
  readonly truth: string;
  readonly wrong: readonly [string, string, string];
  /** Cumulative weights of the three wrong answers. */
  readonly wrongCdf: readonly [number, number, number];
  /** P(one sample of the model is right). */
  readonly pRight: Readonly<Record<ModelName, number>>;
  /** The model's over- (or under-) confidence on this question, shared by all its samples. */
  readonly confidenceBias: Readonly<Record<ModelName, number>>;
}

const WORDS = ['the', 'report', 'of', 'which', 'year', 'river', 'total', 'name', 'city', 'first', 'value', 'given', 'table', 'in', 'and', 'count'];

export function population(params: SimParams = DEFAULT_PARAMS): Question[] {
  const questions: Question[] = [];
  for (let index = 0; index < params.questions; index += 1) {
    const random = mulberry32(seedOf(params.seed, 1, index));
    const hard = random() < params.hardShare;
    const kind = hard ? params.hard : params.easy;
    const difficulty = kind.mean + kind.sd * normal(random);
    const words = 15 + Math.floor(random() * 120);
    const body = Array.from({ length: words }, () => WORDS[Math.floor(random() * WORDS.length)]).join(' ');
    // One tempting wrong answer and two others: exponential weights, sorted.
    const raw = [random(), random(), random()].map((u) => -Math.log(1 - u)).sort((a, b) => b - a) as [number, number, number];
    const sum = raw[0] + raw[1] + raw[2];
    questions.push(
      Object.freeze({
        index,
        hard,
        difficulty,
        text: `Question ${index}: ${body}?`,
        truth: `answer ${index}`,
        wrong: [`wrong ${index}a`, `wrong ${index}b`, `wrong ${index}c`] as const,
        wrongCdf: [raw[0] / sum, (raw[0] + raw[1]) / sum, 1] as const,
        pRight: { cheap: sigmoid(params.ability.cheap - difficulty), strong: sigmoid(params.ability.strong - difficulty) },
        confidenceBias: { cheap: params.confidence.questionNoise * normal(random), strong: params.confidence.questionNoise * normal(random) },
      }),
    );
  }
  return questions;
}

const MODEL_ID: Record<ModelName, number> = { cheap: 1, strong: 2 };

export interface Draw {
  readonly answer: string;
  readonly right: boolean;
  readonly confidence: number;
  readonly outputTokens: number;
  readonly latencyTurns: number;
  readonly reply: string;
}

/** The envelope Booth asks for, as a model following the instructions writes it. */
export function envelopeOf(answer: string, confidence: number): string {
  return JSON.stringify({ ambiguous: false, interpretations: [], chosen_interpretation: null, answer, confidence });
}

/** Tokens of a text, as the usual rule of thumb for English counts them: one per four characters. */
export const tokensOf = (text: string) => Math.ceil(text.length / 4);

/** What the model says to `question` in its `sample`-th call of its `attempt`-th attempt: pure. */
export function draw(params: SimParams, question: Question, model: ModelName, sample: number, attempt: number): Draw {
  const random = mulberry32(seedOf(params.seed, 2, question.index, MODEL_ID[model], sample, attempt));
  const p = question.pRight[model];
  const right = random() < p;
  const u = random();
  const k = u < question.wrongCdf[0] ? 0 : u < question.wrongCdf[1] ? 1 : 2;
  const answer = right ? question.truth : question.wrong[k];
  // How often the model gives this very answer: its confidence follows that, right or wrong.
  const share = right ? p : (1 - p) * (question.wrongCdf[k] - (k === 0 ? 0 : question.wrongCdf[k - 1]!));
  const { base, slope, rightBonus, sampleNoise } = params.confidence;
  const felt = base + slope * share + (right ? rightBonus : 0) + question.confidenceBias[model] + sampleNoise * normal(random);
  const confidence = Math.round(clamp(felt, 0.05, 0.99) * 100) / 100;
  const reply = envelopeOf(answer, confidence);
  const latencyTurns = 1 + Math.floor(random() * params.maxLatencyTurns);
  return { answer, right, confidence, outputTokens: tokensOf(reply), latencyTurns, reply };
}

/** Dollars per token of a model. */
export function prices(params: SimParams, model: ModelName): { input: number; output: number } {
  const times = model === 'strong' ? params.priceRatio : 1;
  return { input: (params.cheapPrice.inputPerMTok * times) / 1e6, output: (params.cheapPrice.outputPerMTok * times) / 1e6 };
}

/** One call as the simulated provider saw and billed it. */
export interface BilledCall {
  readonly model: ModelName;
  readonly sample: number;
  readonly attempt: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  /**
   * `pending` while the call runs (billed in full if it runs to the end); `replied`; or
   * `aborted` by its signal: billed its input tokens only, and not reported to Booth.
   */
  state: 'pending' | 'replied' | 'aborted';
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The model as a `callFn` for one check of `question`; each call is entered in `ledger` when
 * it starts, and its entry completed when it replies or is aborted.
 *
 * - The reply is the envelope of `draw(…, info.sample ?? 0, attempt)`, where `attempt` counts
 *   this model's own attempts in the check (info.attempt less the first one it was called
 *   with), so a cascade's strong model answers exactly as the strong model alone does.
 * - Usage: `info.reportUsage({ inputTokens, outputTokens, costUsd })` when the reply arrives,
 *   tokens counted from the prompt and the reply (one per four characters).
 * - Latency: 1 to `maxLatencyTurns` turns of the event loop, waited one turn at a time, so the
 *   order calls finish in is deterministic too.
 * - `info.signal`: when it fires while the call runs, the call rejects at once with the
 *   signal's reason, as fetch does; the provider bills its input tokens (it read the prompt)
 *   and no output, and the call reports no usage (a real adapter never hears back from an
 *   aborted request). A call whose signal had fired before it started sends nothing and
 *   costs nothing.
 */
export function simulatedModel(params: SimParams, question: Question, model: ModelName, ledger: BilledCall[]): AsyncCallFn {
  let firstAttempt: number | null = null;
  const price = prices(params, model);
  return (prompt: string, info: CallInfo) => {
    firstAttempt ??= info.attempt;
    const attempt = info.attempt - firstAttempt;
    const sample = info.sample ?? 0;
    const signal = info.signal;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const said = draw(params, question, model, sample, attempt);
    const inputTokens = tokensOf(prompt);
    const entry: BilledCall = {
      model,
      sample,
      attempt,
      inputTokens,
      outputTokens: said.outputTokens,
      costUsd: inputTokens * price.input + said.outputTokens * price.output,
      state: 'pending',
    };
    ledger.push(entry);
    return new Promise<string>((resolve, reject) => {
      const onAbort = () => {
        if (entry.state !== 'pending') return;
        entry.state = 'aborted';
        entry.outputTokens = 0;
        entry.costUsd = inputTokens * price.input;
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      void (async () => {
        for (let i = 0; i < said.latencyTurns; i += 1) {
          await turn();
          if (entry.state !== 'pending') return;
        }
        entry.state = 'replied';
        signal?.removeEventListener('abort', onAbort);
        try {
          info.reportUsage?.({ inputTokens, outputTokens: said.outputTokens, costUsd: entry.costUsd });
        } catch (error) {
          reject(error);
          return;
        }
        resolve(said.reply);
      })();
    });
  };
}

/**
 * The area under the ROC curve of `scores` for telling `positive` ones apart: the chance a
 * random positive scores above a random negative, ties counting half.
 */
export function auroc(scores: readonly number[], positive: readonly boolean[]): number {
  const order = scores.map((score, k) => ({ score, pos: positive[k]! })).sort((a, b) => a.score - b.score);
  let rankSum = 0;
  let nPos = 0;
  for (let i = 0; i < order.length; ) {
    let j = i;
    while (j < order.length && order[j]!.score === order[i]!.score) j += 1;
    const rank = (i + 1 + j) / 2;
    for (let k = i; k < j; k += 1) {
      if (order[k]!.pos) {
        rankSum += rank;
        nPos += 1;
      }
    }
    i = j;
  }
  const nNeg = order.length - nPos;
  return (rankSum - (nPos * (nPos + 1)) / 2) / (nPos * nNeg);
}

export interface CellStats {
  /** Share of samples right. */
  readonly accuracy: number;
  readonly meanConfidence: number;
  /** How well the self-reported confidence tells right samples from wrong ones. */
  readonly auroc: number;
  readonly samples: number;
}

/**
 * Population statistics, as the docs state them: for each model, one sample's accuracy and mean
 * self-reported confidence on easy and hard questions and overall, from the first
 * `samplesPerQuestion` samples of each question's first attempt.
 */
export function populationStats(params: SimParams, questions: readonly Question[], samplesPerQuestion = 5) {
  const cell = (model: ModelName, which: (q: Question) => boolean): CellStats => {
    const confidences: number[] = [];
    const rights: boolean[] = [];
    for (const q of questions) {
      if (!which(q)) continue;
      for (let s = 0; s < samplesPerQuestion; s += 1) {
        const d = draw(params, q, model, s, 0);
        confidences.push(d.confidence);
        rights.push(d.right);
      }
    }
    const n = confidences.length;
    return {
      accuracy: rights.filter(Boolean).length / n,
      meanConfidence: confidences.reduce((a, b) => a + b, 0) / n,
      auroc: auroc(confidences, rights),
      samples: n,
    };
  };
  const byModel = (model: ModelName) => ({ easy: cell(model, (q) => !q.hard), hard: cell(model, (q) => q.hard), all: cell(model, () => true) });
  return { hardShare: questions.filter((q) => q.hard).length / questions.length, cheap: byModel('cheap'), strong: byModel('strong') };
}

/**
 * The fewest samples after which a rule can stop, when every sample agrees: the exact rule
 * when the leader's count exceeds the samples left (a > max − a); the Beta rule when
 * P(p_leader > p_runnerUp) = P(Binomial(a + 1, ½) ≥ 1) = 1 − 2^−(a+1) reaches the confidence
 * (b = 0), or sooner when the vote is decided exactly.
 */
export function floorSamples(max: number, stop: 'decided' | number): number {
  const exact = Math.floor(max / 2) + 1;
  if (stop === 'decided') return exact;
  let a = 1;
  while (1 - 2 ** -(a + 1) < stop) a += 1;
  return Math.min(a, exact);
}
