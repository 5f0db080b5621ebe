/**
 * Runs `task` after the timers and I/O already due: `setImmediate` where there is one (Node,
 * Bun), else a zero timeout (browsers, Deno). For long work done in pieces, so that what waits
 * on the event loop — timers, sockets, a queue worker's lock renewal — runs between them.
 */
export const nextMacrotask: (task: () => void) => void =
  typeof globalThis.setImmediate === 'function' ? (task) => void globalThis.setImmediate(task) : (task) => void setTimeout(task, 0);

/** Settles in the next macrotask (see `nextMacrotask`). */
export const untilNextMacrotask = (): Promise<void> => new Promise((resolve) => nextMacrotask(resolve));
