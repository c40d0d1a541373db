import { describe, expect, it } from 'vitest';
import { SESSION_HINT_META, withSessionHint } from '../../src/domain/session-hint';

// docs/architecture.md, "Preloaded by the page": a page served with a session cookie carries a
// `<meta name="imagegen-session">` mark; the app asks /auth/me only when it is there.
describe('session hint', () => {
  it('is the meta name docs/architecture.md gives', () => {
    expect(SESSION_HINT_META).toBe('imagegen-session');
  });

  it('goes into the head, once, and leaves the rest of the page as it was', () => {
    const html = '<!doctype html><html><head><title>x</title></head><body><div id="root"></div></body></html>';
    const marked = withSessionHint(html);
    const head = marked.slice(marked.indexOf('<head>'), marked.indexOf('</head>'));
    const metas = marked.match(/<meta [^>]*>/g) ?? [];
    expect(metas).toHaveLength(1);
    expect(head).toContain(metas[0]);
    expect(metas[0]).toMatch(/^<meta name="imagegen-session" content="[^"]+" ?\/?>$/);
    expect(marked.replace(/<meta name="imagegen-session"[^>]*>/, '')).toBe(html);
  });
});
