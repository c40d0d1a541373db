import { z } from 'zod';

/**
 * Whole numbers that arrive as text (query values, path ids): only plain decimal digits,
 * no sign, no leading zeros, no exponent, no hex, no spaces. `Number()` and `z.coerce`
 * would read `0x10`, `1e3`, `+5`, ` 7` and `00001` as numbers; we do not.
 */
export const PLAIN_DECIMAL = /^(0|[1-9][0-9]*)$/;

/** More digits than any id or page we have; refused before the conversion loses precision. */
const MAX_DIGITS = 15;

export function parsePlainDecimal(value: unknown): number | undefined {
  if (typeof value !== 'string' || value.length > MAX_DIGITS || !PLAIN_DECIMAL.test(value)) return undefined;
  return Number(value);
}

/**
 * A zod schema: a string of plain decimal digits, as a number from `min` to `max`; every
 * failure (wrong shape, out of range, not a string, repeated query key) gives `message`.
 */
export function plainDecimalInteger(options: { message: string; min?: number; max?: number }) {
  const { message, min = 0, max = Number.MAX_SAFE_INTEGER } = options;
  return z.string({ error: message }).transform((value, ctx) => {
    const n = parsePlainDecimal(value);
    if (n === undefined || n < min || n > max) {
      ctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    }
    return n;
  });
}
