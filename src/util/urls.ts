/**
 * URLs as Booth shows them in messages, results, pages and spans. A URL can carry a
 * credential in three places — its user name and password (`http://user:sk-…@host`), its
 * query (`?key=sk-…`) and its fragment — so all three are replaced by `***` wherever a URL
 * is shown: the model endpoint of `openAICompatible` and the CLI, and the Redis URL of
 * `--queue`. One helper for every URL, so a new message cannot show one unredacted.
 */

const HIDDEN = '***';

/** `scheme://` at the start of a URL. */
const SCHEME = /^[a-z][a-z\d+.-]*:\/\//i;

/**
 * `value` with the user name, the password, each query value (names kept: they say which
 * parameter was given, and a value is what holds a key) and the fragment replaced by `***`.
 * The rest is kept as written, so a message about a bad argument still shows the argument.
 * Works on any string, a URL or not: one that does not parse is redacted the same way, and
 * over-redacted where it is unclear where its password ends.
 *
 * @example shownUrl('http://user:sk-1@host/v1?key=sk-2') === 'http://***:***@host/v1?key=***'
 */
export function shownUrl(value: string): string {
  const scheme = SCHEME.exec(value)?.[0] ?? '';
  let head = scheme;
  let rest = value.slice(scheme.length);
  // In a URL that parses, the authority ends at the first `/`, `?` or `#` and the user
  // information at its last `@`. In one that does not, a password may hold any of them
  // (`http://u:p/w@host`): everything to the last `@` before a query counts as user
  // information. So it does without a scheme (`user:sk-…@host:8080/v1`, which the URL parser
  // reads as the scheme `user:`).
  const authority = rest.slice(0, firstOf(rest, scheme !== '' && URL.canParse(value) ? /[/?#]/ : /[?#]/));
  const at = authority.lastIndexOf('@');
  if (at >= 0) {
    head += `${userInfo(authority.slice(0, at))}@`;
    rest = rest.slice(at + 1);
  }
  const query = rest.search(/[?#]/);
  if (query < 0) return head + rest;
  const fragment = rest.indexOf('#', query);
  const search = rest.slice(query, fragment < 0 ? undefined : fragment);
  return head + rest.slice(0, query) + shownQuery(search) + (fragment < 0 ? '' : `#${HIDDEN}`);
}

/** Every URL in `text` as `shownUrl` shows it: for messages that quote another library's words. */
export function redactUrls(text: string): string {
  return text.replace(/\b[a-z][a-z\d+.-]*:\/\/[^\s"'<>`]+/gi, shownUrl);
}

function firstOf(text: string, pattern: RegExp): number {
  const index = text.search(pattern);
  return index < 0 ? text.length : index;
}

/** `user:password` with each part that is there hidden, so the message still says which were given. */
function userInfo(info: string): string {
  const colon = info.indexOf(':');
  const user = colon < 0 ? info : info.slice(0, colon);
  const shownUser = user === '' ? '' : HIDDEN;
  if (colon < 0) return shownUser;
  return `${shownUser}:${info.length > colon + 1 ? HIDDEN : ''}`;
}

/** `?a=1&b` as `?a=***&***`: a parameter without `=` may itself be the key. */
function shownQuery(search: string): string {
  if (!search.startsWith('?') || search === '?') return search;
  const parts = search
    .slice(1)
    .split('&')
    .map((part) => {
      if (part === '') return part;
      const equals = part.indexOf('=');
      return equals < 0 ? HIDDEN : `${part.slice(0, equals)}=${HIDDEN}`;
    });
  return `?${parts.join('&')}`;
}
