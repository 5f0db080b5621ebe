import { canonicalJson, type Cluster } from './agreement.js';
import type { AnswerFormat } from './schema.js';
import { CLARIFICATION_MARKER, CONFIDENCE_RETRY_MARKER, GENERIC_VALIDATION_MESSAGE, DISAGREEMENT_RETRY_MARKER, PARSE_RETRY_MARKER, VALIDATION_RETRY_MARKER } from './constants.js';

/**
 * Booth's instructions for a free-text answer: the envelope's keys, listed in the order
 * the model should write them. Judging ambiguity first makes it commit to "is this
 * answerable as asked?" before it answers. The `instructions` option replaces them.
 */
export const INSTRUCTIONS = instructionsFor('your answer');

function instructionsFor(answer: string): string {
  return [
    'Respond with exactly one JSON object with these keys, in this order:',
    '- "ambiguous": true when reasonable readings of the question lead to materially different answers (for example entities that share a name, different metrics, or different time periods); otherwise false.',
    '- "interpretations": the distinct readings, as a list of strings; an empty list when the question is not ambiguous.',
    '- "chosen_interpretation": when ambiguous, the most likely reading, the one your answer follows; null when not ambiguous.',
    `- "answer": ${answer}; when the question is ambiguous, still answer it under the most likely reading.`,
    '- "confidence": your honest probability, from 0.0 to 1.0, that the answer is right, neither inflated nor deflated.',
    'Output the JSON object only.',
  ].join('\n');
}

/** The instructions for an answer in `format`; `INSTRUCTIONS` without a schema. */
export function instructions(format: AnswerFormat | null): string {
  if (format === null) return INSTRUCTIONS;
  return instructionsFor(
    format.jsonSchema === null
      ? "your answer, as a JSON value that satisfies the application's schema for answers"
      : `your answer, as a JSON value valid against this JSON Schema: ${format.jsonSchema}`,
  );
}

/** One message of a chat: what `info.messages` holds, and the earlier turns a caller gives as `messages`. */
export interface ChatMessage {
  readonly role: 'system' | 'user' | 'assistant';
  readonly content: string;
}

/** An earlier turn of the conversation the question belongs to. */
export interface ChatTurn extends ChatMessage {
  readonly role: 'user' | 'assistant';
}

/** What a run says to the model: the question, the application's system prompt, earlier turns, Booth's instructions. */
export interface Conversation {
  /** The question, as the caller gave it. */
  readonly prompt: string;
  readonly system: string | null;
  /** The earlier turns. */
  readonly messages: readonly ChatTurn[];
  /** The instructions every prompt ends with: Booth's for the answer format, or the caller's own. */
  readonly instructions: string;
}

/**
 * The chat a call sends, for `sent` (one of the run's prompts, which end with the
 * instructions): a system message holding the application's system prompt and then the
 * instructions — the same for every question and retry, so providers' prompt caching
 * applies — the earlier turns, and the user turn: the question, and on a retry why the
 * last attempt failed.
 */
export function chatMessages(conversation: Conversation, sent: SentPrompt): readonly ChatMessage[] {
  const user: ChatMessage = { role: 'user', content: userTurn(conversation, sent) };
  const system = systemMessage(conversation);
  const { messages: history } = conversation;
  return system === null ? [...history, user] : [system, ...history, user];
}

/**
 * The prompt without its instructions. A first (or repeated) prompt's is the question: read
 * off the prompt, the string would be flattened, a kilobyte more for every call in flight.
 */
function userTurn({ prompt, instructions: text }: Conversation, { kind, text: sent }: SentPrompt): string {
  // A clarification's or an escalation's prompt is the first of its round: the question is already the clarified one.
  if (kind === 'first' || kind === 'repeat' || kind === 'clarification' || kind === 'escalation') return prompt.trimEnd();
  return sent.endsWith(text) ? sent.slice(0, sent.length - text.length - 2) : sent;
}

/**
 * The run's system message, made once per run and shared by its calls: joined anew, the
 * instructions alone would be a kilobyte more for every call in flight.
 */
function systemMessage(conversation: Conversation): ChatMessage | null {
  let message = SYSTEM_MESSAGES.get(conversation);
  if (message === undefined) {
    const { system, instructions: text } = conversation;
    const content = system === null || system === '' ? text : text === '' ? system : `${system}\n\n${text}`;
    message = content === '' ? null : Object.freeze({ role: 'system' as const, content });
    SYSTEM_MESSAGES.set(conversation, message);
  }
  return message;
}

const SYSTEM_MESSAGES = new WeakMap<Conversation, ChatMessage | null>();

/** Which retry prompt follows a rejected attempt. */
export type RetryKind = 'repeat' | 'parse' | 'validation' | 'disagreement' | 'confidence';

/**
 * A prompt Booth sent the model, and why: the first one, which kind of retry, or the first
 * of a round that follows a person's clarification.
 */
export interface SentPrompt {
  readonly kind: 'first' | RetryKind | 'clarification' | 'escalation';
  readonly text: string;
}

/**
 * What the person who asked an ambiguous question said it means: one of the readings the
 * model offered (`chosen`), or the question in their own words (`rephrased`).
 */
export interface Clarification {
  /** The question as it stood when the readings were offered: the caller's, or as an earlier clarification made it. */
  readonly question: string;
  /** The readings the model offered. */
  readonly readings: readonly string[];
  readonly chosen: string | null;
  readonly rephrased: string | null;
  /** The first attempt asked with the clarification: where its round starts. */
  readonly attempt: number;
}

/**
 * The question as asked after a clarification: the question, then what the person said it
 * means, quoted as a JSON string so that neither a reading the model wrote nor the person's
 * words can break the prompt's structure. A reading is the model's text, cut as a validator's
 * message is (`MESSAGE_LIMIT`); the person's rephrasing is their question, kept whole. Every prompt of the round restates it, so a retry
 * after the clarification keeps it.
 */
export function clarifiedQuestion(question: string, { chosen, rephrased }: Pick<Clarification, 'chosen' | 'rephrased'>): string {
  const said =
    rephrased === null
      ? `${CLARIFICATION_MARKER}: they mean ${escapeLineBreaks(JSON.stringify(cutAt(chosen ?? '', MESSAGE_LIMIT)))}, one of the readings you offered. Answer it in that sense.`
      : `${CLARIFICATION_MARKER}, rephrasing it as ${escapeLineBreaks(JSON.stringify(rephrased))}. Answer the question as rephrased.`;
  return `${question.trimEnd()}\n\n${said}`;
}

/** The first attempt's prompt: the question, then the instructions (Booth's for `format`, unless given). */
export function firstPrompt(prompt: string, format: AnswerFormat | null = null, text: string = instructions(format)): string {
  return `${prompt.trimEnd()}\n\n${text}`;
}

/** What a retry prompt needs to know about the attempt it follows. */
export interface PreviousAttempt {
  /** Quoted as JSON: a string without a schema, the model's own value with one. */
  readonly answer: unknown;
  readonly confidence: number | null;
  readonly error: string | null;
  readonly validationError: string | null;
  /** With several samples, how their answers clustered, winner first; otherwise null. */
  readonly clusters?: readonly Cluster<unknown>[] | null | undefined;
}

/**
 * Retry prompts restate the original prompt rather than accumulate a conversation, so
 * each attempt costs the same and a bad reply cannot leak into later ones. The previous
 * answer is inserted as a JSON string literal so its quotes and newlines cannot break
 * the prompt's structure.
 */
export function retryPrompt(
  prompt: string,
  kind: RetryKind,
  previous: PreviousAttempt,
  format: AnswerFormat | null = null,
  text: string = instructions(format),
): string {
  if (kind === 'repeat') return firstPrompt(prompt, format, text);
  return `${prompt.trimEnd()}\n\n${retryParagraph(kind, previous, format !== null)}\n\n${text}`;
}

function retryParagraph(kind: Exclude<RetryKind, 'repeat'>, previous: PreviousAttempt, typed: boolean): string {
  // A parse retry follows an attempt with an error; the other two follow one with an answer.
  switch (kind) {
    case 'parse':
      return (
        `Your previous response ${PARSE_RETRY_MARKER}: ${previous.error}. ` +
        'Reply with the single JSON object described below and nothing else: no code fences, no commentary.'
      );
    case 'validation':
      return (
        `Your previous answer was ${quoted(previous.answer, typed)}. It ${VALIDATION_RETRY_MARKER}: ` +
        `${echoMessage(previous.validationError || GENERIC_VALIDATION_MESSAGE)}. Give a corrected answer.`
      );
    case 'disagreement':
      return disagreementParagraph(previous.clusters ?? [], typed);
    case 'confidence':
      return (
        `Your previous answer was ${quoted(previous.answer, typed)}, with confidence ${plainDecimal(previous.confidence ?? 0)}. ` +
        `${CONFIDENCE_RETRY_MARKER}: if it is right, restate it; if it is not, correct it.`
      );
  }
}

/** At most this many competing answers are listed; the rest are counted. */
const MAX_LISTED_ANSWERS = 5;

/**
 * The competing answers as new information: each with how many samples gave it, quoted as
 * a JSON string (cut at 200 characters) so no answer can break the prompt's structure.
 * Asking to "reconsider" without new information lowers accuracy (Huang et al., ICLR 2024).
 */
function disagreementParagraph(clusters: readonly Cluster<unknown>[], typed: boolean): string {
  const total = clusters.reduce((sum, c) => sum + c.count, 0);
  const listed = clusters.slice(0, MAX_LISTED_ANSWERS).map((c) => {
    // A typed answer is quoted as JSON already, as `quoted` quotes the previous answer.
    const text = typed ? echoJson(canonicalJson(c.answer)) : echoText(String(c.answer));
    return `- ${text}: ${c.count} of ${total} samples`;
  });
  const rest = clusters.slice(MAX_LISTED_ANSWERS).reduce((sum, c) => sum + c.count, 0);
  if (rest > 0) listed.push(`- other answers: ${rest} of ${total} samples`);
  return (
    `Independent ${DISAGREEMENT_RETRY_MARKER}:\n${listed.join('\n')}\n` +
    'Weigh them, work out which answer you can justify, and give that one, with a confidence that says how sure you are after weighing them.'
  );
}

/** The previous answer as JSON, cut as `echoText` and `echoJson` cut it: a paid prompt never carries a whole long answer. */
function quoted(answer: unknown, typed: boolean): string {
  if (!typed || typeof answer === 'string') return echoText(String(answer));
  return echoJson(JSON.stringify(answer) ?? 'null');
}

/** How many characters of a previous answer a retry prompt quotes, the quotes and escapes aside. */
export const ECHO_LIMIT = 200;

/**
 * Text as a JSON string literal, cut to `ECHO_LIMIT` characters first so that the quote
 * always closes, and with the line breaks `JSON.stringify` leaves raw escaped.
 */
export function echoText(text: string): string {
  return escapeLineBreaks(JSON.stringify(cutAt(text, ECHO_LIMIT)));
}

/**
 * JSON text, cut to `ECHO_LIMIT` characters. A cut inside a string (never inside one of its
 * escapes) closes the string after the ellipsis, so no quote is left open for the text
 * after it to continue.
 */
export function echoJson(json: string): string {
  if (json.length <= ECHO_LIMIT) return escapeLineBreaks(json);
  let cut = ECHO_LIMIT - 2;
  let inString = false;
  let escapeAt = -1;
  for (let i = 0; i < cut; i += 1) {
    const code = json.charCodeAt(i);
    if (!inString) inString = code === QUOTE;
    else if (code === BACKSLASH) escapeAt = i++;
    else if (code === QUOTE) inString = false;
  }
  // An escape runs over the cut: \uXXXX is six characters, every other one two.
  if (escapeAt >= 0 && escapeAt + (json.charCodeAt(escapeAt + 1) === LETTER_U ? 6 : 2) > cut) cut = escapeAt;
  else if (isHighSurrogate(json.charCodeAt(cut - 1))) cut -= 1;
  return escapeLineBreaks(`${json.slice(0, cut)}…${inString ? '"' : ''}`);
}

/** How many characters of a validator's or schema's message a retry prompt repeats. */
export const MESSAGE_LIMIT = 500;

/**
 * A validator's or schema's message as a retry prompt repeats it: on one line and cut to
 * `MESSAGE_LIMIT` characters. A message often quotes the answer, and so can carry a megabyte
 * of it, or a line of its own that reads as an instruction to the model; the attempt's
 * `validationError` keeps the message whole.
 */
export function echoMessage(message: string): string {
  return cutAt(message, MESSAGE_LIMIT).replace(ANY_LINE_BREAK, ' ');
}

const ANY_LINE_BREAK = /\r\n|[\n\r\u0085\u2028\u2029]/g;

/** `text` cut to at most `limit` characters, an ellipsis last, never between the halves of a surrogate pair. */
function cutAt(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const cut = isHighSurrogate(text.charCodeAt(limit - 2)) ? limit - 2 : limit - 1;
  return `${text.slice(0, cut)}…`;
}

/**
 * U+0085, U+2028 and U+2029 end a line for many readers but are legal raw in a JSON string:
 * escaped, a quoted answer cannot start what looks like a new line of the prompt.
 */
function escapeLineBreaks(json: string): string {
  return json.replace(LINE_BREAKS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const LINE_BREAKS = /[\u0085\u2028\u2029]/g;
const QUOTE = 34;
const BACKSLASH = 92;
const LETTER_U = 117;

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * A number in plain decimal notation: `1e-7` is written `0.0000001`. String() uses an
 * exponent only below 1e-6 and from 1e21 on, with one digit before the point, so the
 * digits go wholly after the point or wholly before it.
 */
export function plainDecimal(value: number): string {
  const text = String(value);
  const e = text.indexOf('e');
  if (e === -1) return text;
  const exponent = Number(text.slice(e + 1));
  const sign = text.startsWith('-') ? '-' : '';
  const digits = text.slice(sign.length, e).replace('.', '');
  if (text.includes('e-')) return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`;
  return `${sign}${digits}${'0'.repeat(exponent + 1 - digits.length)}`;
}
