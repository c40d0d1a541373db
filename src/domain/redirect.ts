/**
 * "Is this address on our origin?", decided once for the server (sign-in redirects) and
 * the browser (the remembered page on /login). Isomorphic: only the WHATWG URL class.
 *
 * Browsers and servers disagree on many spellings of a path (a backslash is a slash to a
 * browser, `/.//x` resolves to `//x`, which a browser reads as another host, `%2e` is a
 * dot to some routers, tabs and newlines are silently dropped from URLs). Rather than
 * normalise hostile spellings into something we hope is harmless, any value that needs
 * such normalisation is refused: a person never types one, and the caller falls back.
 */

/** Longer values are refused outright: no legitimate page address comes near it. */
export const REDIRECT_MAX_LENGTH = 2048;

// C0 controls, space, DEL and C1 controls: URL parsers strip or reinterpret them.
// eslint-disable-next-line no-control-regex -- matching control characters is the point.
const CONTROL_OR_SPACE = /[\u0000-\u0020\u007f-\u009f]/;
// Characters that some parser (browser, proxy, router) treats as a path or host separator.
const SEPARATOR_LOOKALIKES = /[\\\u2215\u2044\uff0f\uff3c\u3002\uff0e]/;
// A path segment that is `.` or `..`.
const DOT_SEGMENT = /(^|\/)\.{1,2}(\/|$)/;
// A percent-encoded dot, slash or backslash, or percent-encoded percent (double encoding).
const ENCODED_SPECIAL = /%(2e|2f|5c|25)/i;

function isSuspicious(text: string): boolean {
  return CONTROL_OR_SPACE.test(text) || SEPARATOR_LOOKALIKES.test(text);
}

function safeDecode(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}

/** The path part of a value that starts with `/` or an http(s) scheme, without search and hash. */
function pathOf(value: string): string {
  const end = value.search(/[?#]/);
  return end === -1 ? value : value.slice(0, end);
}

/**
 * `value` resolved against `appUrl`, when it is unambiguously an address on appUrl's
 * origin: an absolute path (`/chat/12?x=1#y`) or an absolute http(s) URL on that origin,
 * with no controls, spaces, backslashes, dot segments, encoded dots or slashes, userinfo,
 * or protocol-relative start. Anything else is null.
 */
export function sameOriginUrl(value: string, appUrl: string): URL | null {
  if (typeof value !== 'string' || value === '' || value.length > REDIRECT_MAX_LENGTH) return null;
  if (isSuspicious(value)) return null;

  let base: URL;
  try {
    base = new URL(appUrl);
  } catch {
    return null;
  }

  let candidatePath: string;
  if (value.startsWith('/')) {
    // `//host` and `/\host` are other hosts to a browser.
    if (value.startsWith('//')) return null;
    candidatePath = pathOf(value);
  } else if (/^https?:\/\//i.test(value)) {
    // An absolute URL: its own authority is checked below; its path gets the same rules.
    const afterScheme = value.slice(value.indexOf('//') + 2);
    const slash = afterScheme.search(/[/?#]/);
    const authority = slash === -1 ? afterScheme : afterScheme.slice(0, slash);
    if (authority.includes('@')) return null;
    candidatePath = slash === -1 ? '/' : pathOf(afterScheme.slice(slash));
    if (!candidatePath.startsWith('/')) candidatePath = '/';
  } else {
    // Relative paths (`dashboard`, `.//evil.com`), other schemes (`javascript:`), and
    // anything else: nothing a person or our app produces.
    return null;
  }
  if (candidatePath.startsWith('//') || DOT_SEGMENT.test(candidatePath) || ENCODED_SPECIAL.test(candidatePath)) {
    return null;
  }
  // The path once decoded, as a router or proxy might see it, must say the same thing.
  const decodedPath = safeDecode(candidatePath);
  if (
    decodedPath === null ||
    isSuspicious(decodedPath) ||
    decodedPath.includes('//') ||
    DOT_SEGMENT.test(decodedPath)
  ) {
    return null;
  }

  let url: URL;
  try {
    url = new URL(value, base);
  } catch {
    return null;
  }
  if (url.origin !== base.origin || url.username !== '' || url.password !== '') return null;
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  // The parser must not have changed the path's meaning (it would, for a dot segment).
  if (url.pathname.startsWith('//') || url.pathname.includes('\\')) return null;
  return url;
}

/**
 * A same-origin path + search + hash for a Location header or a router navigation, or
 * `fallback`. The result always starts with exactly one `/` followed by neither `/` nor
 * `\`, so no browser can read it as another origin.
 */
export function safeRedirectPath(value: unknown, appUrl: string, fallback: string): string {
  if (typeof value !== 'string') return fallback;
  const url = sameOriginUrl(value, appUrl);
  if (!url) return fallback;
  const path = `${url.pathname}${url.search}${url.hash}`;
  if (!path.startsWith('/') || path.startsWith('//') || path.startsWith('/\\')) return fallback;
  return path;
}
