import { describe, expect, it } from 'vitest';
import { REDIRECT_MAX_LENGTH, safeRedirectPath, sameOriginUrl } from '../../src/domain/redirect';

const APP = 'https://app.example.com';
const FALLBACK = '/dashboard';

/** Values a hostile or careless link may carry; every one must fall back. */
const hostile: string[] = [
  // The examples.
  '/.//evil.com',
  '/..//evil.com',
  '/%2e//evil.com',
  '/./\\evil.com',
  '/x/..//evil.com',
  './/evil.com',
  '..//evil.com',
  // Protocol-relative and backslash forms.
  '//evil.com',
  '///evil.com',
  '////evil.com',
  '/\\evil.com',
  '\\\\evil.com',
  '\\/evil.com',
  '/\\/evil.com',
  '\\evil.com',
  // Dot segments, plain and encoded.
  '/./',
  '/../',
  '/a/../../evil.com',
  '/%2e%2e//evil.com',
  '/.%2e//evil.com',
  '/%2E//evil.com',
  '/x/%2e%2e/%2e%2e//evil.com',
  '/./evil.com/../..//evil.com',
  // Encoded slashes, backslashes and double encoding.
  '/%2f%2fevil.com',
  '/%2F/evil.com',
  '/%5cevil.com',
  '/%5C%5Cevil.com',
  '/%252e//evil.com',
  '/%252f%252fevil.com',
  // Tabs, newlines and other controls that URL parsers drop.
  '/\t/evil.com',
  '/\n/evil.com',
  '/\r/evil.com',
  '/\r\n/evil.com',
  '\t//evil.com',
  ' //evil.com',
  '/%09/evil.com',
  '/%0a/evil.com',
  '/%0d%0a/evil.com',
  '/\u0000/evil.com',
  '/%00/evil.com',
  '/\u007f/evil.com',
  '/\u0085/evil.com',
  '/dashboard\nLocation: https://evil.com',
  // Userinfo.
  'https://app.example.com@evil.com',
  'https://app.example.com:443@evil.com/',
  'https://user:pass@app.example.com/dashboard',
  'https://evil.com#@app.example.com',
  'https://evil.com\\@app.example.com',
  // Other origins and schemes.
  'https://evil.com',
  'https://evil.com/dashboard',
  'http://app.example.com/dashboard',
  'https://app.example.com:8443/dashboard',
  'https://app.example.com.evil.com/',
  'javascript:alert(1)',
  'JavaScript:alert(1)',
  'java\nscript:alert(1)',
  'data:text/html,<script>alert(1)</script>',
  'vbscript:msgbox(1)',
  'file:///etc/passwd',
  'ftp://app.example.com/',
  'https:evil.com',
  'https:/evil.com',
  'https:\\\\evil.com',
  // Relative paths, lookalikes and oddities.
  'evil.com',
  'dashboard',
  '?x=1',
  '#top',
  '',
  ' ',
  '/\uff0fevil.com',
  '/\u2215evil.com',
  '/\uff3cevil.com',
  '/x' + 'a'.repeat(3000),
];

describe('safeRedirectPath', () => {
  it(`refuses ${hostile.length} hostile values`, () => {
    expect(hostile.length).toBeGreaterThanOrEqual(50);
    const accepted = hostile
      .map((value) => ({ value, result: safeRedirectPath(value, APP, FALLBACK) }))
      .filter(({ result }) => result !== FALLBACK);
    expect(accepted).toEqual([]);
    for (const value of hostile) expect(sameOriginUrl(value, APP)).toBeNull();
  });

  it('refuses what is not a string', () => {
    for (const value of [undefined, null, 42, {}, ['/dashboard'], true]) {
      expect(safeRedirectPath(value, APP, FALLBACK)).toBe(FALLBACK);
    }
  });

  it.each([
    ['/dashboard', '/dashboard'],
    ['/chat/12', '/chat/12'],
    ['/gallery?page=2&q=red%20cat', '/gallery?page=2&q=red%20cat'],
    ['/payment-status?paymentId=5&status=success', '/payment-status?paymentId=5&status=success'],
    ['/dashboard#top', '/dashboard#top'],
    ['/', '/'],
    ['https://app.example.com/chat/3', '/chat/3'],
    ['https://APP.example.com/chat/3?x=1', '/chat/3?x=1'],
    ['https://app.example.com', '/'],
    ['/dashboard?prompt=%D0%BA%D0%BE%D1%82', '/dashboard?prompt=%D0%BA%D0%BE%D1%82'],
  ])('keeps the same-origin address %s', (value, expected) => {
    expect(safeRedirectPath(value, APP, FALLBACK)).toBe(expected);
    expect(sameOriginUrl(value, APP)?.origin).toBe(APP);
  });

  it('never returns something a browser reads as another origin, even for generated values', () => {
    const pieces = ['/', '\\', '.', '..', '%2e', '%2f', '%5c', 'evil.com', '@', ':', '\t', '\n', 'x', '?', '#', '%09'];
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let i = 0; i < 5000; i += 1) {
      const length = 1 + Math.floor(random() * 6);
      let value = '';
      for (let j = 0; j < length; j += 1) value += pieces[Math.floor(random() * pieces.length)];
      const result = safeRedirectPath(value, APP, FALLBACK);
      expect(result.startsWith('/')).toBe(true);
      expect(result.startsWith('//') || result.startsWith('/\\')).toBe(false);
      expect(new URL(result, APP).origin).toBe(APP);
    }
  });
});

// docs/operations.md, hardening: the value must be an absolute path or an http(s) URL on APP_URL's
// origin, with no controls, spaces, backslashes, dot segments, encoded dots or slashes, or
// userinfo; anything else falls back. The product brief's rule behind it: redirects stay
// on our origin.
describe('safeRedirectPath, the rules of docs/operations.md one at a time', () => {
  it.each([
    // A dot segment at the end of the path, where no slash follows it.
    ['/chat/.'],
    ['/chat/..'],
    ['/chat/..?x=1'],
    ['/chat/.#top'],
    ['/%2e'],
    ['/chat/%2E%2E'],
    // An absolute URL on our origin gets the same path rules as an absolute path.
    ['https://app.example.com/a/../dashboard'],
    ['https://app.example.com/a/./dashboard'],
    ['https://app.example.com/chat/..'],
    ['https://app.example.com/%2e%2e/dashboard'],
    ['https://app.example.com/%2F%2Fevil.com'],
    ['https://app.example.com//evil.com'],
    ['https://app.example.com/%252e%252e/dashboard'],
    // Userinfo, even an empty one.
    ['https://@app.example.com/dashboard'],
    ['https://:@app.example.com/dashboard'],
    ['https://user@app.example.com'],
    ['https://user:secret@app.example.com?x=1'],
    // Controls and spaces anywhere, the query and the fragment included.
    ['/dashboard?q=a b'],
    ['/dashboard?q=a\tb'],
    ['/dashboard?x=1\r\nSet-Cookie: a=b'],
    ['/dashboard#top\n'],
    ['https://app.example.com/dashboard?q=\u0000'],
    // Backslashes in the query are backslashes too.
    ['/dashboard?next=\\\\evil.com'],
    // Relative paths, even when an address of ours appears later in them.
    ['chat/https://app.example.com/'],
    ['dashboard?https://app.example.com/'],
    ['x//app.example.com/'],
    ['xhttps://app.example.com/dashboard'],
  ])('refuses %j', (value) => {
    expect(safeRedirectPath(value, APP, FALLBACK)).toBe(FALLBACK);
    expect(sameOriginUrl(value, APP)).toBeNull();
  });

  it.each([
    // An @ in the path, query or fragment is not userinfo.
    ['https://app.example.com/gallery?q=me@example.com', '/gallery?q=me@example.com'],
    ['https://app.example.com/gallery#me@example.com', '/gallery#me@example.com'],
    ['/gallery?q=me@example.com', '/gallery?q=me@example.com'],
    // A query or fragment straight after the host.
    ['https://app.example.com?page=2', '/?page=2'],
    ['https://app.example.com#top', '/#top'],
    // Dots inside a segment are not dot segments.
    ['/images/cat.png', '/images/cat.png'],
    ['/a/..b/c...', '/a/..b/c...'],
    ['https://app.example.com/v1.2/x', '/v1.2/x'],
  ])('keeps %j', (value, expected) => {
    expect(safeRedirectPath(value, APP, FALLBACK)).toBe(expected);
  });

  it('keeps addresses on an http origin (the default APP_URL is http://localhost:$PORT)', () => {
    const local = 'http://localhost:5173';
    expect(safeRedirectPath('http://localhost:5173/chat/3?x=1', local, FALLBACK)).toBe('/chat/3?x=1');
    expect(safeRedirectPath('HTTP://localhost:5173/gallery', local, FALLBACK)).toBe('/gallery');
    expect(safeRedirectPath('/chat/3', local, FALLBACK)).toBe('/chat/3');
    expect(sameOriginUrl('http://localhost:5173/chat/3', local)?.href).toBe('http://localhost:5173/chat/3');
    // The https twin, another port or another host is another origin.
    expect(safeRedirectPath('https://localhost:5173/chat/3', local, FALLBACK)).toBe(FALLBACK);
    expect(safeRedirectPath('http://localhost:5174/chat/3', local, FALLBACK)).toBe(FALLBACK);
    expect(safeRedirectPath('http://localhost.evil.com:5173/chat/3', local, FALLBACK)).toBe(FALLBACK);
  });

  it('answers for values no parser makes sense of, without throwing', () => {
    for (const value of [
      '/%',
      '/%zz',
      '/chat/%E0%A4%A',
      '/%C0%AF',
      'https://app.example.com/%',
      'https://app.example.com:99999/dashboard',
      'https://[/dashboard',
      'https://app.example.com:x/',
    ]) {
      let result = '';
      expect(() => {
        result = safeRedirectPath(value, APP, FALLBACK);
      }).not.toThrow();
      expect(result).toBe(FALLBACK);
      expect(sameOriginUrl(value, APP)).toBeNull();
    }
  });

  it('falls back when the app address itself is not an address', () => {
    expect(sameOriginUrl('/dashboard', 'not a url')).toBeNull();
    expect(sameOriginUrl('/dashboard', '')).toBeNull();
    expect(safeRedirectPath('/dashboard', 'not a url', FALLBACK)).toBe(FALLBACK);
    // An absolute address cannot be on an origin that is not there.
    expect(sameOriginUrl('https://app.example.com/dashboard', 'not a url')).toBeNull();
    expect(safeRedirectPath('https://app.example.com/dashboard', 'app.example.com', FALLBACK)).toBe(FALLBACK);
  });

  it('sameOriginUrl answers null for what is not a string, as safeRedirectPath does', () => {
    // Called from plain JavaScript (a query value may be an array or missing).
    const untyped = sameOriginUrl as (value: unknown, appUrl: string) => URL | null;
    for (const value of [undefined, null, 42, {}, ['/dashboard'], true]) {
      expect(untyped(value, APP)).toBeNull();
    }
  });

  it('takes an address up to REDIRECT_MAX_LENGTH characters and refuses a longer one', () => {
    expect(REDIRECT_MAX_LENGTH).toBeGreaterThanOrEqual(2000);
    const longest = '/gallery?q=' + 'a'.repeat(REDIRECT_MAX_LENGTH - '/gallery?q='.length);
    expect(longest).toHaveLength(REDIRECT_MAX_LENGTH);
    expect(safeRedirectPath(longest, APP, FALLBACK)).toBe(longest);
    expect(safeRedirectPath(`${longest}a`, APP, FALLBACK)).toBe(FALLBACK);
  });
});
