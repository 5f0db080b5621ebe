import { defineConfig } from 'vitest/config';
import base from '../../vitest.config.js';

/**
 * The engine differential test again, on the oldest XState the peer range allows
 * (`xstate-floor` is xstate@5.33.0 under another name): the stepper must equal XState's
 * actor on every version a user may have, not only on the one this repo installs.
 */
export default defineConfig({
  ...base,
  resolve: {
    alias: [
      { find: /^xstate$/, replacement: 'xstate-floor' },
      { find: /^xstate\/(.*)$/, replacement: 'xstate-floor/$1' },
    ],
  },
  test: {
    ...base.test,
    include: ['tests/engine/engines.test.ts'],
    env: { BOOTH_XSTATE: 'floor' },
  },
});
