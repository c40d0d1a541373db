import { beforeEach, describe, expect, it, vi } from 'vitest';
import { forgetDrafts, heldDraft, holdDrafts, keepDraft } from '../../src/api/drafts';

/** The tab's storage, as the browser's Storage interface behaves for these calls. */
class TabStorage {
  private readonly items = new Map<string, string>();
  getItem = (key: string) => this.items.get(key) ?? null;
  setItem = (key: string, value: string) => void this.items.set(key, String(value));
  removeItem = (key: string) => void this.items.delete(key);
}

beforeEach(() => {
  vi.stubGlobal('sessionStorage', new TabStorage());
});

// Issue #26 item 4: what the user typed survives a session that ended mid-work, for them only.
describe('drafts kept through a sign-in', () => {
  it('gives nothing back while the session is alive: a screen opened again starts as SPEC says', () => {
    keepDraft('generation', 7, 'a fox');
    expect(heldDraft('generation', 7)).toBeUndefined();
  });

  it('gives back each input to the same user once the session has ended, until it is edited', () => {
    keepDraft('generation', 7, 'a fox');
    keepDraft('chat', 7, 'hello');
    holdDrafts();
    expect(heldDraft('generation', 7)).toBe('a fox');
    // A screen may mount twice: reading takes nothing away.
    expect(heldDraft('generation', 7)).toBe('a fox');
    expect(heldDraft('chat', 7)).toBe('hello');
    keepDraft('chat', 7, 'hello again');
    expect(heldDraft('chat', 7)).toBeUndefined();
    expect(heldDraft('generation', 7)).toBe('a fox');
  });

  it('never gives one account what another typed', () => {
    keepDraft('chat', 7, 'private words');
    holdDrafts();
    expect(heldDraft('chat', 8)).toBeUndefined();
    keepDraft('chat', 8, 'mine');
    holdDrafts();
    expect(heldDraft('chat', 7)).toBeUndefined();
    expect(heldDraft('chat', 8)).toBe('mine');
  });

  it('forgets everything on logout, and keeps nothing for nobody', () => {
    keepDraft('chat', 7, 'private words');
    keepDraft('generation', undefined, 'typed while signed out');
    holdDrafts();
    forgetDrafts();
    expect(heldDraft('chat', 7)).toBeUndefined();
    expect(sessionStorage.getItem('drafts')).toBeNull();
  });

  it('does not hold inputs that were left blank', () => {
    keepDraft('chat', 7, '   ');
    holdDrafts();
    expect(heldDraft('chat', 7)).toBeUndefined();
  });
});
