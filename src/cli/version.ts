import { readFileSync } from 'node:fs';

/** The version in the package.json next to the running file: dist/cli.js and src/cli/index.ts both find it. */
export function ownVersion(): string {
  for (let dir = new URL('.', import.meta.url); ; dir = new URL('..', dir)) {
    try {
      const manifest = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as { name?: unknown; version?: unknown };
      if (manifest.name === 'boothjs' && typeof manifest.version === 'string') return manifest.version;
    } catch {
      // No package.json here: look one folder up.
    }
    if (new URL('..', dir).href === dir.href) return 'unknown';
  }
}
