import { describe, expect, it } from 'vitest';
import { numberText } from '../../src/util/numbers.js';

describe('numbers as a reader sees them', () => {
  it('drop the tails arithmetic leaves, keeping four significant digits', () => {
    expect([0.4800000000000001, 0.8000000000000002, 0.9499999999999998, 0.1 + 0.2].map(numberText)).toEqual(['0.48', '0.8', '0.95', '0.3']);
    expect([2 / 3, 1 / 6, 0.9995, 0.00003123, -0.125].map(numberText)).toEqual(['0.6667', '0.1667', '0.9995', '0.00003123', '-0.125']);
  });

  it('keep three decimals on larger numbers, and integers, NaN and infinities as they are', () => {
    expect([12345.678, 33.333333333333336, 1.5].map(numberText)).toEqual(['12345.678', '33.333', '1.5']);
    expect([0, 7, 30_000, Number.NaN, Number.POSITIVE_INFINITY].map(numberText)).toEqual(['0', '7', '30000', 'NaN', 'Infinity']);
  });
});
