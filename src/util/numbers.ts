/**
 * A number as Booth shows it to a reader — on a page, in a diagram, in the CLI's output —
 * while JSON keeps it whole. Arithmetic leaves tails no reader needs (a mean of 0.9, 0.8 and
 * 0.7 is 0.8000000000000002, a threshold fitted from 0.95 can read 0.9499999999999998), and a
 * share such as 2/3 is clearer as 0.6667: four significant digits, or three decimals when
 * those keep more (12345.678 stays as it is). Integers, NaN and infinities are shown as they are.
 *
 * @example numberText(0.4800000000000001) === '0.48'
 */
export function numberText(value: number): string {
  if (!Number.isFinite(value) || Number.isInteger(value)) return String(value);
  const integerDigits = Math.max(0, Math.floor(Math.log10(Math.abs(value))) + 1);
  return String(Number(value.toPrecision(Math.max(4, integerDigits + 3))));
}
