import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/**
 * The replies the reader's own tests write out: every string literal (and template without
 * substitutions) holding a `{` in the hand-written reader tests, read from their source with
 * TypeScript's parser, so the corpus follows those tests as they change. The repository has
 * no separate conformance fixture file: these are its conformance replies. Replies built by
 * code (`envelope(...)`, `.repeat(...)`, templates with `${}`) are not seen here; the fuzz
 * corpus and the adversarial tests cover their shapes.
 */
export const LITERAL_SOURCES = [
  '../parse.test.ts',
  '../reader-regressions.test.ts',
  '../reader-fast-path.test.ts',
  '../hostile.test.ts',
  '../json-objects.test.ts',
  '../differential.test.ts',
  '../../portable/reader.test.ts',
  '../../portable/checks.test.ts',
];

export function literalReplies(): string[] {
  const found = new Set<string>();
  for (const source of LITERAL_SOURCES) {
    const path = fileURLToPath(new URL(source, import.meta.url));
    const file = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.ES2022, true);
    const visit = (node: ts.Node): void => {
      if ((ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && node.text.includes('{')) found.add(node.text);
      ts.forEachChild(node, visit);
    };
    visit(file);
  }
  return [...found];
}
