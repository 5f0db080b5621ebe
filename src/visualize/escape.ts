/**
 * The one place where text becomes HTML, Mermaid or Graphviz DOT. Every drawing is built
 * with the tagged templates below, and a tag escapes every `${}` value for its language
 * unless the value is a fragment built by the same tag. So a field added to a page or a
 * diagram later is escaped without anyone remembering to: forgetting is writing the tag's
 * escape hatch on purpose, not leaving a call out.
 *
 * Values are escaped whatever their type: a stored run read from a file or Redis can hold
 * a string where a number belongs (`"confidence": "<img onerror=…>"`), and the drawings
 * must stay inert for it even before anything validated the run.
 */
import { describeValue } from '../util/values.js';

type Language = 'html' | 'mermaid' | 'dot';

/** Text already written in one output language, made only by this module's tags. */
export interface Fragment<L extends Language> {
  readonly language: L;
  readonly text: string;
  toString(): string;
}

export type Html = Fragment<'html'>;
export type Mermaid = Fragment<'mermaid'>;
export type Dot = Fragment<'dot'>;

// Fragments are recognised by identity, not by shape: a JSON value shaped like
// `{language: 'html', text: '<script>'}` in a stored run is only text, and is escaped.
const fragments = new WeakMap<object, Language>();

function fragment<L extends Language>(language: L, text: string): Fragment<L> {
  const built: Fragment<L> = Object.freeze({ language, text, toString: () => text });
  fragments.set(built, language);
  return built;
}

function isFragment<L extends Language>(value: unknown, language: L): value is Fragment<L> {
  return typeof value === 'object' && value !== null && fragments.get(value) === language;
}

/** Any value as text: `String()`, or for one without a usable `toString` (a prototype-less object) its description. */
function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return String(value);
  } catch {
    return describeValue(value);
  }
}

// Function declarations, so the table can name escapers defined further down.
const ESCAPERS: Readonly<Record<Language, (text: string) => string>> = { html: htmlText, mermaid: mermaidText, dot: dotString };

/** A value in one language: its own fragments as they are, arrays item by item with nothing between, anything else as escaped text. */
function write(language: Language, value: unknown): string {
  if (isFragment(value, language)) return value.text;
  if (Array.isArray(value)) return value.map((item: unknown) => write(language, item)).join('');
  return ESCAPERS[language](textOf(value));
}

function tag<L extends Language>(language: L) {
  return (strings: TemplateStringsArray, ...values: readonly unknown[]): Fragment<L> => {
    let text = strings[0] ?? '';
    values.forEach((value, i) => {
      text += write(language, value) + (strings[i + 1] ?? '');
    });
    return fragment(language, text);
  };
}

const HTML_ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text for HTML: safe between tags, in a quoted attribute and in `<title>`. */
export function htmlText(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);
}

/** An HTML fragment: every `${}` value is escaped unless it is itself an `html` fragment. */
export const html = tag('html');

/**
 * Graphviz's SVG as an HTML fragment, without its XML prolog and DOCTYPE, which only belong
 * at the top of a file. The one way into a page for markup this module did not escape: the
 * SVG comes from DOT built with the `dot` tag, whose labels Graphviz writes XML-escaped.
 */
export function graphvizSvg(svg: string): Html {
  const start = svg.indexOf('<svg');
  return fragment('html', start === -1 ? '' : svg.slice(start));
}

const MERMAID_ENTITIES: Readonly<Record<string, string>> = {
  '#': '#35;',
  ';': '#59;',
  '"': '#quot;',
  '<': '#lt;',
  '>': '#gt;',
  '%': '#37;',
  '{': '#123;',
  '}': '#125;',
};

/**
 * Text for a Mermaid label: one line, and Mermaid's specials spelled as its entities. `;`
 * ends a statement, `#` starts an entity, quotes and angle brackets are markup; `%%` starts
 * a comment or, as `%%{init: …}%%`, a directive Mermaid obeys wherever it appears in the
 * source (themeCSS in one restyles the whole page), so every `%` and brace goes too.
 * U+2028, U+2029 and U+0085 end a line for Mermaid's lexer as `\n` does.
 */
export function mermaidText(text: string): string {
  return text.replace(/[\r\n\u2028\u2029\u0085]+/g, ' ').replace(/[#;"<>%{}]/g, (c) => MERMAID_ENTITIES[c] ?? c);
}

/** A Mermaid fragment: every `${}` value is written as label text unless it is itself a `mermaid` fragment. */
export const mermaid = tag('mermaid');

/**
 * A state's name as a Mermaid node id. Ids are not labels, so entities do not apply there:
 * anything but letters, digits and `_` is spelled `_u` and its code in hex, which keeps
 * an id one word and two different names two different ids. Booth's states are plain words
 * and come out unchanged.
 */
export function mermaidId(name: string): Mermaid {
  return fragment('mermaid', name.replace(/[^A-Za-z0-9_]/gu, (c) => `_u${c.codePointAt(0)!.toString(16)}_`));
}

/**
 * A DOT quoted string: JSON's string syntax escapes `"` and `\` as DOT reads them, so no
 * label can close its quotes or form one of Graphviz's `\N`, `\G`, `\l` escapes, and a
 * newline becomes `\n`, which DOT draws as a line break.
 */
export function dotString(text: string): string {
  return JSON.stringify(text);
}

/** A DOT fragment: every `${}` value is written as a quoted DOT string unless it is itself a `dot` fragment. */
export const dot = tag('dot');

/** Fragments of one language one after another, `separator` between them. */
export function join<L extends Language>(parts: readonly Fragment<L>[], separator: Fragment<L>): Fragment<L> {
  const { language } = separator;
  return fragment(language, parts.map((part) => write(language, part)).join(write(language, separator)));
}

const SCRIPT_JSON_ESCAPES: Readonly<Record<string, string>> = { '<': '\\u003c', '>': '\\u003e', '&': '\\u0026', '\u2028': '\\u2028', '\u2029': '\\u2029' };

/**
 * A value as JSON to put between `<script type="application/json">` and `</script>`, read
 * back with `JSON.parse(element.textContent)`. The HTML parser ends such an element at the
 * first `</script` and treats `<!--` specially inside it, whatever JSON means there; with
 * every `<`, `>` and `&` written as a JSON `\u` escape, no string can hold either, and
 * JSON.parse reads the same value back.
 */
export function scriptJson(value: unknown): Html {
  return fragment('html', JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => SCRIPT_JSON_ESCAPES[c] ?? c));
}
