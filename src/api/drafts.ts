/**
 * What the user was typing (the generation prompt, the chat input), kept in this tab's
 * storage so that a session that ends mid-work does not lose it: the sign-in leaves the
 * page, and the screens give it back once the same person is signed in again (issue #26).
 *
 * Drafts are written as they change, but given back only after the session ended on the
 * server, and only to the account that typed them; a logout forgets them, because the next
 * person at a shared computer must not find them.
 */
import type { SessionRef } from '../machines/session';

export type DraftKind = 'generation' | 'chat';

/** The signed-in user's id, read from the session actor a screen's machine was given. */
export function sessionUserId(session: SessionRef | null | undefined): number | undefined {
  return session?.getSnapshot().context.user?.id;
}

const KEY = 'drafts';
const KINDS: readonly DraftKind[] = ['generation', 'chat'];

interface Drafts {
  userId: number;
  /** Kept when the session ended: the screens of this user start from them until edited. */
  held: DraftKind[];
  texts: Partial<Record<DraftKind, string>>;
}

function read(): Drafts | null {
  try {
    const raw = globalThis.sessionStorage?.getItem(KEY);
    const value = raw ? (JSON.parse(raw) as Partial<Drafts>) : null;
    if (!value || typeof value.userId !== 'number' || typeof value.texts !== 'object' || !value.texts) return null;
    const held = Array.isArray(value.held) ? KINDS.filter((kind) => value.held!.includes(kind)) : [];
    return { userId: value.userId, held, texts: value.texts };
  } catch {
    return null;
  }
}

function write(drafts: Drafts | null): void {
  try {
    if (drafts && Object.values(drafts.texts).some((text) => text.trim() !== '')) {
      globalThis.sessionStorage?.setItem(KEY, JSON.stringify(drafts));
    } else globalThis.sessionStorage?.removeItem(KEY);
  } catch (error) {
    console.warn('[drafts] could not keep the draft', error);
  }
}

/** The text of one input as it is now (no longer held: the screen has it); nothing for nobody. */
export function keepDraft(kind: DraftKind, userId: number | null | undefined, text: string): void {
  if (userId === null || userId === undefined) return;
  const current = read();
  const drafts = current?.userId === userId ? current : { userId, held: [], texts: {} };
  write({ userId, held: drafts.held.filter((k) => k !== kind), texts: { ...drafts.texts, [kind]: text } });
}

/** The session ended on the server: what is kept waits for the same user's next sign-in. */
export function holdDrafts(): void {
  const drafts = read();
  if (drafts) write({ ...drafts, held: KINDS.filter((kind) => drafts.texts[kind]?.trim()) });
}

/**
 * The draft a screen starts from: only one held since the session ended, only for the one
 * who typed it. Reading takes nothing away (a screen may mount twice); editing does.
 */
export function heldDraft(kind: DraftKind, userId: number | null | undefined): string | undefined {
  const drafts = read();
  if (!drafts || drafts.userId !== userId || !drafts.held.includes(kind)) return undefined;
  return drafts.texts[kind];
}

/** What a screen given `session` starts its input from: the held draft of that user, if any. */
export function storedDraft(kind: DraftKind, session: SessionRef | null | undefined): string | undefined {
  return heldDraft(kind, sessionUserId(session));
}

/** Logout: nothing typed stays behind for the next person at this computer. */
export function forgetDrafts(): void {
  write(null);
}
