import { randomBytes } from 'node:crypto';
import { closeSync, fchmodSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * Replaces `file` with `text` atomically: the text goes to a temporary file beside it,
 * is flushed to disk, and the temporary file is renamed over `file`, whose folder is then
 * flushed too — so a crash leaves the old contents or the new, never half of them.
 *
 * The temporary file is where an attacker sharing the folder would strike: a name that can
 * be guessed (the pid, the target's name) lets them plant a symlink there first, and a
 * plain open would write through it to any file the user can write. So its name is 128
 * random bits, and it is opened with `wx` (O_CREAT | O_EXCL), which fails on anything that
 * already exists at that name — a symlink included, dangling or not — instead of following
 * it. The rename then replaces `file` itself (a symlink at `file` is replaced, not
 * followed). The name does not grow with `file`'s, so any name the folder accepts for
 * `file` can be replaced: a temporary name built on it would pass the 255 bytes a file
 * name may have before `file`'s own does.
 *
 * `mode`, when given, is the new file's permission bits (the old file's, to keep them):
 * the temporary file is created readable by its owner only, then set to `mode`, so the
 * text is never readable more widely than asked. Without it the file gets 0o666 less the
 * umask, as any new file.
 */
export function replaceFile(file: string, text: string, mode?: number): void {
  const folder = dirname(file);
  const temporary = join(folder, `.booth-${randomBytes(16).toString('hex')}.tmp`);
  const fd = openSync(temporary, 'wx', mode === undefined ? 0o666 : 0o600);
  try {
    try {
      if (mode !== undefined) fchmodSync(fd, mode);
      const bytes = Buffer.from(text);
      for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, file);
  } catch (error) {
    // Ours alone (created exclusively), so removing it cannot touch anything else.
    rmSync(temporary, { force: true });
    throw error;
  }
  // The rename itself must survive a power cut: flush the folder's entry too. (Windows
  // cannot open a folder as a file; NTFS journals the rename itself.)
  if (process.platform === 'win32') return;
  const dir = openSync(folder, 'r');
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}
