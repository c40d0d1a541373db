/** SPEC section 2: every page the SPA answers, for the server's history fallback. */
export const spaRoutePatterns: readonly RegExp[] = [
  /^\/$/,
  /^\/login\/?$/,
  /^\/dashboard\/?$/,
  /^\/portrait-creator\/?$/,
  /^\/gallery\/?$/,
  /^\/chat\/?$/,
  /^\/chat\/[^/]+\/?$/,
  /^\/billing\/?$/,
  /^\/payment-status\/?$/,
  /^\/dev\/statecharts\/?$/,
];

/**
 * A query string as the address holds it: every value stays text (`?prompt=12345` is the
 * prompt "12345", `?paymentId=007` keeps its zeros). The first of repeated keys wins.
 * Route schemas turn the values they want as numbers into numbers themselves.
 */
export function parseSearchText(searchStr: string): Record<string, string> {
  const search: Record<string, string> = {};
  for (const [key, value] of new URLSearchParams(searchStr.startsWith('?') ? searchStr.slice(1) : searchStr)) {
    if (!Object.hasOwn(search, key)) search[key] = value;
  }
  return search;
}

/**
 * The inverse of {@link parseSearchText}: text as it is (no quotes around text that
 * looks like a number), numbers and booleans as written, undefined and null left out.
 */
export function stringifySearchText(search: Record<string, unknown>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(search)) {
    if (value === undefined || value === null) continue;
    if (typeof value === 'string') params.set(key, value);
    else if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') {
      params.set(key, String(value));
    } else params.set(key, JSON.stringify(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

/**
 * The search values a route keeps: each named key whose value is text (values arrive as
 * text, parseSearchText) of at most its length. Anything else is left out, as if the
 * address had not named it.
 */
export function textSearch<K extends string>(
  search: Record<string, unknown>,
  maxLengths: Record<K, number>,
): Partial<Record<K, string>> {
  const kept: Partial<Record<K, string>> = {};
  for (const key of Object.keys(maxLengths) as K[]) {
    const value = search[key];
    if (typeof value === 'string' && value.length <= maxLengths[key]) kept[key] = value;
  }
  return kept;
}

/** What /login keeps of its address: the page to come back to and a failed sign-in's reason. */
export function loginSearchOf(search: Record<string, unknown>): { redirect?: string; error?: string } {
  return textSearch(search, { redirect: Infinity, error: Infinity });
}
