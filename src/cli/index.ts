/**
 * The `booth` command: `demo`, `ask`, `batch`, `worker` and `calibrate`. Exit codes: 0 done
 * (for `ask`: the answer was accepted), 1 failed (for `ask`: not accepted; for `batch`: a
 * file could not be read or written, or Redis could not be reached), 2 bad usage, 130
 * stopped by Ctrl-C.
 */
import { CommanderError } from 'commander';
import { USAGE_ERROR } from './flags.js';
import { program } from './program.js';

export async function main(argv: readonly string[]): Promise<void> {
  try {
    await program().parseAsync([...argv]);
  } catch (error) {
    if (error instanceof CommanderError) {
      // `booth --help`, `booth help` and `booth --version` succeed; bare `booth` (code commander.help) is bad usage.
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || (error.code === 'commander.help' && error.exitCode === 0)) {
        process.exitCode = 0;
      } else {
        if (error.code.startsWith('booth.')) console.error(error.message);
        process.exitCode = error.code === 'booth.calibrate' ? 1 : USAGE_ERROR;
      }
      return;
    }
    console.error(`error: ${(error as Error).message}`);
    process.exitCode = 1;
  }
}

// `booth … | head` closes the pipe early: that ends the output, not with a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(process.exitCode ?? 0);
});

await main(process.argv);
