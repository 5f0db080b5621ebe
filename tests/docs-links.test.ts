import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Every relative link in the Markdown the npm package ships must lead to a file the package
 * ships, and every `#anchor` to a heading of that file: an app author reads README.md and
 * docs/ from node_modules or from npmjs.com, where the repository's sources, tests and
 * benches are not. So the links are read from a real `npm pack` tarball, not from the
 * working tree, which holds files the package leaves out.
 */

/** GitHub's heading anchors: the heading's text, lower-cased, without punctuation, spaces as hyphens. */
function anchorOf(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link counts by its text
    .replace(/`+/g, '') // code keeps its characters, not its backticks
    .replace(/<[^>]+>/g, '');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

const FENCE = /^\s*(`{3,}|~{3,})([\w+-]*)\s*$/;

/** Each line of the page with fenced code blanked, so a `# comment` in a sh block is no heading and a link in code is no link. */
function proseLines(markdown: string): string[] {
  let fence: string | null = null;
  return markdown.split('\n').map((line) => {
    const match = FENCE.exec(line);
    if (fence === null && match?.[1]) {
      fence = match[1];
      return '';
    }
    if (fence !== null) {
      if (match?.[1] && match[1][0] === fence[0] && match[1].length >= fence.length && match[2] === '') fence = null;
      return '';
    }
    return line;
  });
}

/** The anchors a page's headings make, with GitHub's `-1`, `-2` … for repeated ones. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLines(markdown)) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = anchorOf(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

interface Link {
  readonly line: number;
  readonly target: string;
}

/** Inline links and images, reference definitions and HTML `href`/`src`, outside code. */
function linksOf(markdown: string): Link[] {
  const links: Link[] = [];
  proseLines(markdown).forEach((raw, index) => {
    const line = raw.replace(/(`+)(?:(?!\1)[\s\S])*?\1/g, 'code');
    const found = [
      ...[...line.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]),
      ...[...line.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?/g)].map((m) => m[1]),
      ...[...line.matchAll(/\b(?:href|src)\s*=\s*"([^"]*)"/g)].map((m) => m[1]),
    ];
    for (const target of found) if (target !== undefined) links.push({ line: index + 1, target });
  });
  return links;
}

/**
 * What is wrong with the relative links of these pages, given every file of the package
 * (paths relative to its root, `/`-separated, with their text for the Markdown ones).
 */
function brokenLinks(files: ReadonlyMap<string, string | null>): string[] {
  const problems: string[] = [];
  for (const [page, markdown] of files) {
    if (markdown === null || !page.endsWith('.md')) continue;
    for (const { line, target } of linksOf(markdown)) {
      if (/^[a-z][a-z\d+.-]*:/i.test(target) || target.startsWith('//')) continue; // https:, mailto:: not a file of the package
      const hash = target.indexOf('#');
      const path = decodeURI(hash === -1 ? target : target.slice(0, hash));
      const anchor = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1));
      const resolved = path === '' ? page : posix.normalize(posix.join(posix.dirname(page), path));
      const where = `${page}:${line}: ${target}`;
      if (!files.has(resolved)) {
        problems.push(`${where} leads to ${resolved}, which the package does not contain`);
        continue;
      }
      if (anchor === null) continue;
      const text = files.get(resolved);
      if (typeof text !== 'string' || !resolved.endsWith('.md')) problems.push(`${where}: #${anchor} points into ${resolved}, which is not a Markdown page`);
      else if (!anchorsOf(text).has(anchor)) problems.push(`${where}: ${resolved} has no heading whose anchor is #${anchor}`);
    }
  }
  return problems;
}

describe('the link checker', () => {
  it('makes the anchors GitHub makes', () => {
    expect(anchorOf('Scaling out: `booth batch --queue` and `booth worker`')).toBe('scaling-out-booth-batch---queue-and-booth-worker');
    expect(anchorOf('Checkpoints in Redis: `boothjs/redis`')).toBe('checkpoints-in-redis-boothjsredis');
    expect(anchorOf('Options of `check` and `acheck`')).toBe('options-of-check-and-acheck');
    expect([...anchorsOf('# A\n## A\n```sh\n# not a heading\n```\n### Ünïcode, too!')]).toEqual(['a', 'a-1', 'ünïcode-too']);
  });

  it('reports a link to a file the package leaves out, a missing anchor and a path outside the package', () => {
    const files = new Map<string, string | null>([
      ['README.md', '[ok](docs/a.md#first) [stepper](src/engine/stepper.ts) [gone](docs/a.md#second)\n[web](https://example.com/x.ts)'],
      ['docs/a.md', '# First\n[back](../README.md) [up](../../outside.md) `[in code](src/x.ts)`\n```md\n[fenced](src/y.ts)\n```'],
      ['dist/index.js', null],
    ]);
    expect(brokenLinks(files)).toEqual([
      'README.md:1: src/engine/stepper.ts leads to src/engine/stepper.ts, which the package does not contain',
      'README.md:1: docs/a.md#second: docs/a.md has no heading whose anchor is #second',
      'docs/a.md:2: ../../outside.md leads to ../outside.md, which the package does not contain',
    ]);
  });
});

describe('the packed package', () => {
  const root = fileURLToPath(new URL('..', import.meta.url));
  let work = '';
  const files = new Map<string, string | null>();

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'booth-pack-'));
    // --ignore-scripts: only what `files` selects goes in; no build runs here. dist/ is then
    // packed when it has been built (CI builds before testing) and absent otherwise, so a
    // link into dist/ would fail locally: there must be none.
    const output = execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const [{ filename }] = JSON.parse(output) as [{ filename: string }];
    execFileSync('tar', ['-xzf', join(work, filename), '-C', work]);
    const walk = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else {
          const inPackage = relative(join(work, 'package'), path).split(sep).join('/');
          files.set(inPackage, inPackage.endsWith('.md') ? readFileSync(path, 'utf8') : null);
        }
      }
    };
    walk(join(work, 'package'));
  }, 60_000);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('ships the README and every page of docs/', () => {
    const pages = readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md'));
    expect(pages.length).toBeGreaterThan(10);
    expect([...files.keys()]).toEqual(expect.arrayContaining(['README.md', 'LICENSE', 'package.json', ...pages.map((name) => `docs/${name}`)]));
  });

  it('holds no relative link to a file it does not ship, nor to a heading that is not there', () => {
    const checked = [...files].flatMap(([, text]) => (text === null ? [] : linksOf(text).filter((link) => !/^[a-z][a-z\d+.-]*:/i.test(link.target))));
    expect(checked.length).toBeGreaterThan(30); // the README's map alone links every page
    expect(brokenLinks(files)).toEqual([]);
  });
});
