import { describe, expect, it } from 'vitest';

/**
 * Booth compiles the checkpoint machine for its stepper when it is loaded, so a machine the
 * stepper cannot run fails at import, never mid-check. Imported here inside the test, so
 * that a failure is this test's, with the compiler's message.
 */
describe('loading Booth', () => {
  it('compiles the checkpoint machine for the stepper without complaint', async () => {
    const booth = await import('../../src/index.js');
    expect(booth.check(() => '{"answer": "Paris", "confidence": 0.9}', 'Capital of France?').status).toBe('VERIFIED');
  });
});
