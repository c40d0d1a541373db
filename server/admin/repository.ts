import { and, asc, eq, gt, sql } from 'drizzle-orm';
import type { Executor } from '../db/client';
import { paymentRefunds, payments, sessions, tokenLedger, users } from '../db/schema';

export interface UserSummary {
  id: number;
  email: string;
  name: string | null;
  isActive: boolean;
  tokensAmount: number;
}

const summary = {
  id: users.id,
  email: users.email,
  name: users.name,
  isActive: users.isActive,
  tokensAmount: users.tokensAmount,
};

/** A user by id ("42") or by e-mail. */
export async function findUser(db: Executor, idOrEmail: string): Promise<UserSummary | undefined> {
  const where = /^\d+$/.test(idOrEmail) ? eq(users.id, Number(idOrEmail)) : eq(users.email, idOrEmail);
  const rows = await db.select(summary).from(users).where(where).orderBy(asc(users.id)).limit(1);
  return rows[0];
}

export async function ledgerOf(db: Executor, userId: number) {
  return db.select().from(tokenLedger).where(eq(tokenLedger.userId, userId)).orderBy(asc(tokenLedger.id));
}

export interface InvariantRow {
  userId: number;
  email: string;
  balance: number;
  ledgerSum: number;
  lastBalanceAfter: number | null;
}

/**
 * Every user whose ledger does not sum to the balance, whose newest ledger row does not
 * record the balance, or whose balance is below zero; and how many users were checked.
 */
export async function invariantViolations(db: Executor): Promise<{ checked: number; violations: InvariantRow[] }> {
  interface Raw {
    user_id: number;
    email: string;
    balance: number;
    ledger_sum: string;
    last_balance_after: number | null;
  }
  const rows = await db.execute(sql`
    select u.id as user_id, u.email, u.tokens_amount as balance,
      coalesce(l.total, 0)::text as ledger_sum, last.balance_after as last_balance_after
    from ${users} u
    left join (select user_id, sum(delta) as total from ${tokenLedger} group by user_id) l on l.user_id = u.id
    left join lateral (
      select balance_after from ${tokenLedger} t where t.user_id = u.id order by t.id desc limit 1
    ) last on true
    order by u.id`);
  const all = rowsOf<Raw>(rows).map((row) => ({
    userId: Number(row.user_id),
    email: row.email,
    balance: Number(row.balance),
    ledgerSum: Number(row.ledger_sum),
    lastBalanceAfter: row.last_balance_after === null ? null : Number(row.last_balance_after),
  }));
  const violations = all.filter(
    (row) =>
      row.balance < 0 ||
      row.ledgerSum !== row.balance ||
      (row.lastBalanceAfter === null ? row.balance !== 0 : row.lastBalanceAfter !== row.balance),
  );
  return { checked: all.length, violations };
}

/** Marks the user inactive and ends every session of theirs; false when already inactive. */
export async function disableUser(db: Executor, userId: number): Promise<{ changed: boolean; sessionsEnded: number }> {
  const updated = await db
    .update(users)
    .set({ isActive: false, updatedAt: new Date() })
    .where(and(eq(users.id, userId), eq(users.isActive, true)))
    .returning({ id: users.id });
  const ended = await db.delete(sessions).where(eq(sessions.userId, userId)).returning({ id: sessions.id });
  return { changed: updated.length > 0, sessionsEnded: ended.length };
}

export async function enableUser(db: Executor, userId: number): Promise<boolean> {
  const updated = await db
    .update(users)
    .set({ isActive: true, updatedAt: new Date() })
    .where(and(eq(users.id, userId), eq(users.isActive, false)))
    .returning({ id: users.id });
  return updated.length > 0;
}

/** node-postgres returns `{ rows }`, PGlite an array-like result with `rows` too. */
function rowsOf<T>(result: unknown): T[] {
  if (Array.isArray(result)) return result as T[];
  return (result as { rows?: T[] }).rows ?? [];
}

export interface UnrecoveredRefund {
  refundId: string;
  paymentId: string;
  userId: number;
  email: string;
  refundedKopecks: number;
  paymentKopecks: number;
  tokensTaken: number;
  tokensUnrecovered: number;
  settledAt: Date | null;
}

/**
 * Refunds made at the provider (the shop's dashboard) whose tokens could not all be taken back
 * because the user had spent them: what the operator may want to recover another way.
 */
export async function unrecoveredRefunds(db: Executor): Promise<UnrecoveredRefund[]> {
  return db
    .select({
      refundId: paymentRefunds.providerRefundId,
      paymentId: paymentRefunds.paymentId,
      userId: paymentRefunds.userId,
      email: users.email,
      refundedKopecks: paymentRefunds.amountKopecks,
      paymentKopecks: payments.amountKopecks,
      tokensTaken: paymentRefunds.tokensTaken,
      tokensUnrecovered: paymentRefunds.tokensUnrecovered,
      settledAt: paymentRefunds.settledAt,
    })
    .from(paymentRefunds)
    .innerJoin(users, eq(users.id, paymentRefunds.userId))
    .innerJoin(payments, eq(payments.id, paymentRefunds.paymentId))
    .where(gt(paymentRefunds.tokensUnrecovered, 0))
    .orderBy(asc(paymentRefunds.id));
}
