import { and, eq, gt, sql } from 'drizzle-orm';
import type { Db, Executor } from '../db/client';
import { sessions, users } from '../db/schema';

export type UserRow = typeof users.$inferSelect;

export interface IdentityClaims {
  issuer: string;
  subject: string;
  email: string;
  name: string | null;
  avatar: string | null;
}

/** Creates the user or refreshes the profile; `created` tells which. */
export async function upsertUser(db: Executor, claims: IdentityClaims): Promise<{ user: UserRow; created: boolean }> {
  const inserted = await db
    .insert(users)
    .values({ ...claims })
    .onConflictDoNothing({ target: [users.issuer, users.subject] })
    .returning();
  if (inserted[0]) return { user: inserted[0], created: true };
  const updated = await db
    .update(users)
    .set({ email: claims.email, name: claims.name, avatar: claims.avatar, updatedAt: new Date() })
    .where(and(eq(users.issuer, claims.issuer), eq(users.subject, claims.subject)))
    .returning();
  if (!updated[0]) throw new Error('user vanished during sign-in');
  return { user: updated[0], created: false };
}

export async function findUserById(db: Executor, id: number): Promise<UserRow | undefined> {
  const rows = await db.select().from(users).where(eq(users.id, id));
  return rows[0];
}

export async function insertSession(
  db: Executor,
  session: { tokenHash: string; userId: number; expiresAt: Date; userAgent: string | null },
): Promise<void> {
  await db.insert(sessions).values(session);
}

/**
 * The user of a live session, for every authenticated request: built once as a prepared
 * query, so each call only binds the hash and the time.
 */
export function prepareFindUserBySessionHash(db: Db): (tokenHash: string, now: Date) => Promise<UserRow | undefined> {
  const query = db
    .select({ user: users })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(
      and(
        eq(sessions.tokenHash, sql.placeholder('tokenHash')),
        gt(sessions.expiresAt, sql.placeholder('now')),
        eq(users.isActive, true),
      ),
    )
    .prepare('find_user_by_session_hash');
  return async (tokenHash, now) => (await query.execute({ tokenHash, now }))[0]?.user;
}

export async function deleteSessionByHash(db: Executor, tokenHash: string): Promise<void> {
  await db.delete(sessions).where(eq(sessions.tokenHash, tokenHash));
}
