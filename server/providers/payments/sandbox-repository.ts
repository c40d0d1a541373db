import { and, eq, sql } from 'drizzle-orm';
import type { Executor } from '../../db/client';
import { sandboxPayments } from '../../db/schema';

export type SandboxPaymentRow = typeof sandboxPayments.$inferSelect;

/** Inserts the payment unless its Idempotence-Key was used; returns the key's payment either way. */
export async function insertOnce(db: Executor, row: typeof sandboxPayments.$inferInsert): Promise<SandboxPaymentRow> {
  await db.insert(sandboxPayments).values(row).onConflictDoNothing({ target: sandboxPayments.idempotenceKey });
  const rows = await db.select().from(sandboxPayments).where(eq(sandboxPayments.idempotenceKey, row.idempotenceKey));
  const stored = rows[0];
  if (!stored) throw new Error('sandbox payment insert returned no row');
  return stored;
}

export async function findById(db: Executor, id: string): Promise<SandboxPaymentRow | undefined> {
  const rows = await db.select().from(sandboxPayments).where(eq(sandboxPayments.id, id));
  return rows[0];
}

/** Pay or decline a payment still waiting for the customer; undefined when already decided. */
export async function decide(
  db: Executor,
  id: string,
  outcome: { status: 'succeeded'; paymentMethodId: string } | { status: 'canceled'; reason: string },
): Promise<SandboxPaymentRow | undefined> {
  const rows = await db
    .update(sandboxPayments)
    .set(
      outcome.status === 'succeeded'
        ? { status: 'succeeded', paymentMethodId: outcome.paymentMethodId, updatedAt: new Date() }
        : { status: 'canceled', cancellationReason: outcome.reason, updatedAt: new Date() },
    )
    .where(and(eq(sandboxPayments.id, id), eq(sandboxPayments.status, 'pending')))
    .returning();
  return rows[0];
}

/** Records a refund of a succeeded payment, at most its amount. */
export async function addRefund(db: Executor, id: string, kopecks: number): Promise<boolean> {
  const rows = await db
    .update(sandboxPayments)
    .set({ refundedKopecks: sql`${sandboxPayments.refundedKopecks} + ${kopecks}`, updatedAt: new Date() })
    .where(
      and(
        eq(sandboxPayments.id, id),
        eq(sandboxPayments.status, 'succeeded'),
        sql`${sandboxPayments.refundedKopecks} + ${kopecks} <= ${sandboxPayments.amountKopecks}`,
      ),
    )
    .returning({ id: sandboxPayments.id });
  return rows.length > 0;
}
