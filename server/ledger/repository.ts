import { eq, sql, type SQL } from 'drizzle-orm';
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

export interface LedgerEntryInput {
  userId: number;
  /** Negative for a charge, positive for a credit. */
  delta: number;
  reason: string;
  reference: string | null;
  idempotencyKey: string;
}

export type ApplyOutcome =
  /** The balance changed and the ledger row was written. */
  | { kind: 'applied'; balanceAfter: number }
  /** A charge the balance could not cover (or no such user): nothing changed. */
  | { kind: 'refused' }
  /** The key had been used: the balance change was undone in the same transaction. */
  | { kind: 'duplicate' };

/**
 * The conditional balance UPDATE of a change, for a CTE of a larger statement: a charge
 * only where the balance covers it, and only where `gate` (another condition, such as
 * "the row this pays for was written") holds. Returns `tokens_amount`, the new balance.
 */
export function balanceUpdateSql(userId: number, delta: number, gate?: SQL): SQL {
  const covers = delta < 0 ? sql` and ${users.tokensAmount} >= ${-delta}` : sql``;
  const gated = gate ? sql` and ${gate}` : sql``;
  return sql`update ${users}
    set tokens_amount = tokens_amount + ${delta}, updated_at = now()
    where ${users.id} = ${userId}${covers}${gated}
    returning tokens_amount`;
}

/** A ledger row for a CTE; `reference` and `idempotencyKey` may be SQL over the `from` CTEs. */
export interface LedgerRowSql {
  userId: number;
  delta: number;
  reason: string;
  reference: string | SQL | null;
  idempotencyKey: string | SQL;
}

/**
 * The ledger row of a change, for a CTE: written only when the CTE named `balance` (a
 * {@link balanceUpdateSql}) changed the balance, whose new value it records. `from`
 * names further CTEs the row's expressions read. Returns `balance_after`.
 */
export function ledgerRowSql(
  entry: LedgerRowSql,
  balance: string,
  options: { from?: string[]; onConflictDoNothing?: boolean } = {},
): SQL {
  const sources = sql.join(
    [balance, ...(options.from ?? [])].map((name) => sql.identifier(name)),
    sql`, `,
  );
  const onConflict = options.onConflictDoNothing ? sql` on conflict (idempotency_key) do nothing` : sql``;
  return sql`insert into ${tokenLedger} (user_id, delta, balance_after, reason, reference, idempotency_key)
    select ${entry.userId}, ${entry.delta}, ${sql.identifier(balance)}.tokens_amount, ${entry.reason},
      ${entry.reference}, ${entry.idempotencyKey}
    from ${sources}${onConflict}
    returning balance_after`;
}

/**
 * The balance update and the ledger row in one statement: the conditional UPDATE (a
 * charge only where the balance covers it) feeds the INSERT, whose unique idempotency key
 * turns a repeat into a no-op. On a repeat the UPDATE has already run, so it is reversed
 * at once; the caller's transaction makes the pair atomic.
 */
export async function applyChange(db: Executor, entry: LedgerEntryInput): Promise<ApplyOutcome> {
  // Both drivers (PGlite, node-postgres) answer raw SQL with `{ rows }`.
  const result = (await db.execute(sql`
    with upd as (${balanceUpdateSql(entry.userId, entry.delta)}),
    ins as (${ledgerRowSql(entry, 'upd', { onConflictDoNothing: true })})
    select (select tokens_amount from upd) as updated, (select balance_after from ins) as inserted
  `)) as { rows: Array<{ updated: number | null; inserted: number | null }> };
  const row = result.rows[0];
  if (row?.updated === null || row?.updated === undefined) return { kind: 'refused' };
  if (row.inserted === null || row.inserted === undefined) {
    await db
      .update(users)
      .set({ tokensAmount: sql`${users.tokensAmount} - ${entry.delta}` })
      .where(eq(users.id, entry.userId));
    return { kind: 'duplicate' };
  }
  return { kind: 'applied', balanceAfter: Number(row.inserted) };
}

export async function findEntryByKey(db: Executor, idempotencyKey: string): Promise<LedgerRow | undefined> {
  const rows = await db.select().from(tokenLedger).where(eq(tokenLedger.idempotencyKey, idempotencyKey));
  return rows[0];
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
