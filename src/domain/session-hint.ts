/**
 * The name of a `<meta>` element the server adds to the page it serves to a browser that
 * sent a session cookie (httpOnly, so invisible to the page's script). The app asks
 * GET /auth/me only when the mark is there (or a bearer token is stored), so a signed-out
 * visitor's first screen waits for no request and the console shows no 401. The mark
 * carries no secret: the session is still checked by /auth/me.
 */
export const SESSION_HINT_META = 'imagegen-session';

/** Inserts the mark into an HTML page, just before `</head>`. */
export function withSessionHint(html: string): string {
  return html.replace('</head>', `<meta name="${SESSION_HINT_META}" content="present" /></head>`);
}
