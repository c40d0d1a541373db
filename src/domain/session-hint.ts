/**
 * A cookie the browser's script can read, saying only that a session cookie (httpOnly,
 * so invisible to the script) came with the page. The server sets it on every page it
 * serves to a browser that has a session cookie and removes it from one that has none;
 * the app asks GET /auth/me only when it is there (or a bearer token is stored), so a
 * signed-out visitor's first screen waits for no request and logs no 401. It carries no
 * secret: the session is still checked by /auth/me.
 */
export const SESSION_HINT_COOKIE = 'has_session';
