import { and, eq, gte, sql } from 'drizzle-orm';
import type { Executor } from '../db/client';
import { tokenLedger, users } from '../db/schema';

export interface LedgerRow {
  id: number;
  userId: number;
  delta: number;
  balanceAfter: number;
  reason: string;
  reference: string | null;
  idempotencyKey: string;
  createdAt: Date;
}

export async function findEntryByKey(db: Executor, idempotencyKey: string): Promise<LedgerRow | undefined> {
  const rows = await db.select().from(tokenLedger).where(eq(tokenLedger.idempotencyKey, idempotencyKey));
  return rows[0];
}

/** Decrements only when the balance covers it; returns the new balance or undefined. */
export async function decrementBalance(db: Executor, userId: number, amount: number): Promise<number | undefined> {
  const rows = await db
    .update(users)
    .set({ tokensAmount: sql`${users.tokensAmount} - ${amount}`, updatedAt: new Date() })
    .where(and(eq(users.id, userId), gte(users.tokensAmount, amount)))
    .returning({ balance: users.tokensAmount });
  return rows[0]?.balance;
}

export async function incrementBalance(db: Executor, userId: number, amount: number): Promise<number | undefined> {
  const rows = await db
    .update(users)
    .set({ tokensAmount: sql`${users.tokensAmount} + ${amount}`, updatedAt: new Date() })
    .where(eq(users.id, userId))
    .returning({ balance: users.tokensAmount });
  return rows[0]?.balance;
}

export async function insertEntry(db: Executor, entry: Omit<LedgerRow, 'id' | 'createdAt'>): Promise<LedgerRow> {
  const rows = await db.insert(tokenLedger).values(entry).returning();
  const row = rows[0];
  if (!row) throw new Error('ledger insert returned no row');
  return row;
}

export async function balanceOf(db: Executor, userId: number): Promise<number | undefined> {
  const rows = await db.select({ balance: users.tokensAmount }).from(users).where(eq(users.id, userId));
  return rows[0]?.balance;
}

export async function ledgerSum(db: Executor, userId: number): Promise<number> {
  const rows = await db
    .select({ total: sql<string | null>`sum(${tokenLedger.delta})` })
    .from(tokenLedger)
    .where(eq(tokenLedger.userId, userId));
  return Number(rows[0]?.total ?? 0);
}

export async function entriesFor(db: Executor, userId: number): Promise<LedgerRow[]> {
  return db.select().from(tokenLedger).where(eq(tokenLedger.userId, userId)).orderBy(tokenLedger.id);
}
