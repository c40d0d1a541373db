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
