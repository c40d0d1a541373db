// Longer than 400 lines on purpose: every query on the payments, refunds and subscriptions
// tables, with the row claims and leases the reconciler and renewals share, sits in one place
// (the only file of the feature that speaks SQL, eslint.config.js).
import { and, count, desc, eq, inArray, isNull, notInArray, or, sql } from 'drizzle-orm';
import type { Executor } from '../db/client';
import { leaseEnd, leaseFree } from '../db/clock';
import {
  chatRequests,
  generationRequests,
  paymentRefunds,
  payments,
  subscriptions,
  tokenLedger,
  users,
} from '../db/schema';

export type PaymentRow = typeof payments.$inferSelect;
export type NewPayment = typeof payments.$inferInsert;
export type SubscriptionRow = typeof subscriptions.$inferSelect;
export type RefundRow = typeof paymentRefunds.$inferSelect;
export type NewRefund = typeof paymentRefunds.$inferInsert;

export async function insertPayment(db: Executor, row: NewPayment): Promise<PaymentRow> {
  const rows = await db.insert(payments).values(row).returning();
  const stored = rows[0];
  if (!stored) throw new Error('payment insert returned no row');
  return stored;
}

/**
 * A subscription's first payment (pro's card check or a first month), unless one is pending for
 * the subscription already (`payments_first_pending_key`): then undefined, whichever instance
 * or tab wrote the other.
 */
export async function insertFirstPayment(db: Executor, row: NewPayment): Promise<PaymentRow | undefined> {
  const rows = await db.insert(payments).values(row).onConflictDoNothing().returning();
  return rows[0];
}

/** The subscription's first payment waiting for the customer, if any. */
export async function pendingFirstPayment(db: Executor, subscriptionId: number): Promise<PaymentRow | undefined> {
  const rows = await db
    .select()
    .from(payments)
    .where(
      and(
        eq(payments.subscriptionId, subscriptionId),
        eq(payments.status, 'pending'),
        inArray(payments.purpose, ['trial_verification', 'subscription_first']),
      ),
    );
  return rows[0];
}

/**
 * A renewal's payment for (subscription, period, attempt), written once whichever instance
 * gets there first; the others get the same row.
 */
export async function insertRenewalOnce(db: Executor, row: NewPayment): Promise<PaymentRow> {
  await db
    .insert(payments)
    .values(row)
    .onConflictDoNothing({ target: [payments.subscriptionId, payments.period, payments.attempt] });
  const rows = await db
    .select()
    .from(payments)
    .where(
      and(
        eq(payments.subscriptionId, row.subscriptionId ?? -1),
        eq(payments.period, row.period ?? -1),
        eq(payments.attempt, row.attempt ?? -1),
      ),
    );
  const stored = rows[0];
  if (!stored) throw new Error('renewal payment insert returned no row');
  return stored;
}

export async function setProviderPayment(
  db: Executor,
  id: string,
  providerPaymentId: string,
  confirmationUrl: string | null,
): Promise<void> {
  await db
    .update(payments)
    .set({ providerPaymentId, confirmationUrl, updatedAt: new Date() })
    .where(and(eq(payments.id, id), isNull(payments.providerPaymentId)));
}

export async function findPayment(db: Executor, id: string): Promise<PaymentRow | undefined> {
  const rows = await db.select().from(payments).where(eq(payments.id, id));
  return rows[0];
}

export async function findOwnedPayment(db: Executor, userId: number, id: string): Promise<PaymentRow | undefined> {
  const rows = await db
    .select()
    .from(payments)
    .where(and(eq(payments.id, id), eq(payments.userId, userId)));
  return rows[0];
}

export async function findByProviderId(db: Executor, providerPaymentId: string): Promise<PaymentRow | undefined> {
  const rows = await db.select().from(payments).where(eq(payments.providerPaymentId, providerPaymentId));
  return rows[0];
}

/**
 * Marks the payment paid, once: the row lock makes a concurrent settler wait, and it then
 * finds `credited_at` set and gets nothing. The caller writes the ledger rows in the same
 * transaction.
 */
export async function claimSucceeded(
  db: Executor,
  id: string,
  paymentMethodId: string | null,
): Promise<PaymentRow | undefined> {
  const rows = await db
    .update(payments)
    .set({
      status: 'succeeded',
      cancellationReason: null,
      creditedAt: new Date(),
      paymentMethodId,
      updatedAt: new Date(),
    })
    .where(and(eq(payments.id, id), isNull(payments.creditedAt)))
    .returning();
  return rows[0];
}

/** Closes a payment the provider cancelled (or never decided); only a pending one. */
export async function markCanceled(db: Executor, id: string, reason: string): Promise<PaymentRow | undefined> {
  const rows = await db
    .update(payments)
    .set({ status: 'canceled', cancellationReason: reason, leaseUntil: null, updatedAt: new Date() })
    .where(and(eq(payments.id, id), eq(payments.status, 'pending')))
    .returning();
  return rows[0];
}

export async function markRefunded(db: Executor, id: string): Promise<void> {
  await db.update(payments).set({ refundedAt: new Date(), updatedAt: new Date() }).where(eq(payments.id, id));
}

/**
 * Takes up to `limit` payments pending since before `olderThan` that no other instance is
 * working on, and leases them for `leaseMs`. SKIP LOCKED lets instances claim side by side;
 * the lease keeps a row that is being worked on from being claimed again. The lease is set
 * and judged on the database's clock (server/db/clock.ts), which every instance shares.
 */
export async function claimPending(
  db: Executor,
  olderThan: Date,
  leaseMs: number,
  limit: number,
): Promise<PaymentRow[]> {
  const result = (await db.execute(sql`
    update ${payments} set lease_until = ${leaseEnd(leaseMs)}
    where id in (
      select id from ${payments}
      where status = 'pending' and created_at < ${olderThan.toISOString()}
        and ${leaseFree(payments.leaseUntil)}
      order by created_at
      limit ${limit}
      for update skip locked
    )
    returning id
  `)) as { rows: Array<{ id: string }> };
  if (result.rows.length === 0) return [];
  return db
    .select()
    .from(payments)
    .where(
      inArray(
        payments.id,
        result.rows.map((r) => r.id),
      ),
    );
}

export async function releasePaymentLease(db: Executor, id: string): Promise<void> {
  await db.update(payments).set({ leaseUntil: null }).where(eq(payments.id, id));
}

/** Trial card checks that were paid and still wait for their refund. */
export async function unrefundedTrialChecks(db: Executor, limit: number): Promise<PaymentRow[]> {
  return db
    .select()
    .from(payments)
    .where(
      and(eq(payments.purpose, 'trial_verification'), eq(payments.status, 'succeeded'), isNull(payments.refundedAt)),
    )
    .limit(limit);
}

export async function listPayments(
  db: Executor,
  userId: number,
  page: number,
  limit: number,
): Promise<{ rows: PaymentRow[]; total: number }> {
  const rows = await db
    .select()
    .from(payments)
    .where(eq(payments.userId, userId))
    .orderBy(desc(payments.createdAt), desc(payments.id))
    .limit(limit)
    .offset((page - 1) * limit);
  const totals = await db.select({ n: count() }).from(payments).where(eq(payments.userId, userId));
  return { rows, total: Number(totals[0]?.n ?? 0) };
}

// --- subscriptions -----------------------------------------------------------------------

export async function findSubscription(db: Executor, userId: number): Promise<SubscriptionRow | undefined> {
  const rows = await db.select().from(subscriptions).where(eq(subscriptions.userId, userId));
  return rows[0];
}

/** A subscription the user has now: started (not a first payment still waiting) and not ended. */
export function isRunning(sub: SubscriptionRow | undefined): sub is SubscriptionRow {
  return sub !== undefined && sub.status !== 'incomplete' && sub.endedAt === null;
}

/** The period's tokens spent since its grant, never more than the period's. */
export async function usedThisPeriod(db: Executor, sub: SubscriptionRow): Promise<number> {
  if (sub.periodLedgerId === null) return 0;
  return Math.min(await spentSince(db, sub.userId, sub.periodLedgerId), sub.periodTokens);
}

/** Tokens used of the running subscription's period; undefined when no subscription runs. */
export async function periodTokensUsed(db: Executor, userId: number): Promise<number | undefined> {
  const sub = await findSubscription(db, userId);
  return isRunning(sub) ? usedThisPeriod(db, sub) : undefined;
}

export async function lockSubscription(db: Executor, id: number): Promise<SubscriptionRow | undefined> {
  const rows = await db.select().from(subscriptions).where(eq(subscriptions.id, id)).for('update');
  return rows[0];
}

/**
 * The user's subscription row, made ready for a new first payment; undefined when a live
 * one (trial, active, past_due) exists.
 */
export async function openIncomplete(
  db: Executor,
  userId: number,
  plan: 'pro' | 'premium',
): Promise<SubscriptionRow | undefined> {
  await db.insert(subscriptions).values({ userId, plan, status: 'incomplete' }).onConflictDoNothing();
  const rows = await db
    .update(subscriptions)
    .set({ plan, updatedAt: new Date() })
    .where(
      and(
        eq(subscriptions.userId, userId),
        or(eq(subscriptions.status, 'incomplete'), eq(subscriptions.status, 'cancelled')),
      ),
    )
    .returning();
  const row = rows[0];
  if (!row) return undefined;
  if (row.status === 'cancelled') {
    const reset = await db
      .update(subscriptions)
      .set({ status: 'incomplete' })
      .where(eq(subscriptions.id, row.id))
      .returning();
    return reset[0];
  }
  return row;
}

export async function updateSubscription(
  db: Executor,
  id: number,
  values: Partial<typeof subscriptions.$inferInsert>,
): Promise<SubscriptionRow> {
  const rows = await db
    .update(subscriptions)
    .set({ ...values, updatedAt: new Date() })
    .where(eq(subscriptions.id, id))
    .returning();
  const row = rows[0];
  if (!row) throw new Error(`subscription ${id} vanished`);
  return row;
}

/**
 * Subscriptions whose period has ended (and whose retry is due) by `now`, leased to this
 * instance for `leaseMs` on the database's clock (server/db/clock.ts).
 */
export async function claimDueSubscriptions(
  db: Executor,
  now: Date,
  leaseMs: number,
  limit: number,
): Promise<SubscriptionRow[]> {
  const result = (await db.execute(sql`
    update ${subscriptions} set lease_until = ${leaseEnd(leaseMs)}
    where id in (
      select id from ${subscriptions}
      where status in ('trial', 'active', 'past_due') and period_end <= ${now.toISOString()}
        and (retry_at is null or retry_at <= ${now.toISOString()})
        and ${leaseFree(subscriptions.leaseUntil)}
      order by period_end
      limit ${limit}
      for update skip locked
    )
    returning id
  `)) as { rows: Array<{ id: number }> };
  if (result.rows.length === 0) return [];
  return db
    .select()
    .from(subscriptions)
    .where(
      inArray(
        subscriptions.id,
        result.rows.map((r) => r.id),
      ),
    );
}

/** Keeps the row this instance's for another `leaseMs`, from the database's now. */
export async function extendSubscriptionLease(db: Executor, id: number, leaseMs: number): Promise<void> {
  await db
    .update(subscriptions)
    .set({ leaseUntil: leaseEnd(leaseMs) })
    .where(eq(subscriptions.id, id));
}

export async function releaseSubscriptionLease(db: Executor, id: number): Promise<void> {
  await db.update(subscriptions).set({ leaseUntil: null }).where(eq(subscriptions.id, id));
}

export async function emailOf(db: Executor, userId: number): Promise<string | undefined> {
  const rows = await db.select({ email: users.email }).from(users).where(eq(users.id, userId));
  return rows[0]?.email;
}

/** What the user's profile says about the subscription (`/auth/me`). */
export async function setUserSubscription(
  db: Executor,
  userId: number,
  values: Pick<
    typeof users.$inferInsert,
    | 'subscriptionType'
    | 'subscriptionStatus'
    | 'subscriptionTokensTotal'
    | 'subscriptionTokensUsed'
    | 'nextBillingDate'
    | 'trialEndsAt'
  >,
): Promise<void> {
  await db
    .update(users)
    .set({ ...values, updatedAt: new Date() })
    .where(eq(users.id, userId));
}

/** Reasons that are not spending: money in (and out again), subscription grants and expiries. */
const NOT_SPENDING = ['purchase', 'subscription_grant', 'subscription_expiry', 'signup_bonus', 'payment_refund'];

/** Tokens spent (net of refunds) after ledger row `afterId`. */
export async function spentSince(db: Executor, userId: number, afterId: number): Promise<number> {
  const rows = await db
    .select({ total: sql<string | null>`sum(${tokenLedger.delta})` })
    .from(tokenLedger)
    .where(
      and(
        eq(tokenLedger.userId, userId),
        sql`${tokenLedger.id} > ${afterId}`,
        notInArray(tokenLedger.reason, NOT_SPENDING),
      ),
    );
  return Math.max(0, -Number(rows[0]?.total ?? 0));
}

// --- the spend history -------------------------------------------------------------------

export interface LedgerListRow {
  id: number;
  delta: number;
  balanceAfter: number;
  reason: string;
  reference: string | null;
  createdAt: Date;
  generationModel: string | null;
  chatModel: string | null;
  chatInputTokens: number | null;
  chatOutputTokens: number | null;
  paymentId: string | null;
  paymentTokens: number | null;
  paymentPackage: string | null;
}

export async function listLedger(
  db: Executor,
  userId: number,
  page: number,
  limit: number,
): Promise<{ rows: LedgerListRow[]; total: number }> {
  const rows = await db
    .select({
      id: tokenLedger.id,
      delta: tokenLedger.delta,
      balanceAfter: tokenLedger.balanceAfter,
      reason: tokenLedger.reason,
      reference: tokenLedger.reference,
      createdAt: tokenLedger.createdAt,
      generationModel: generationRequests.model,
      chatModel: chatRequests.model,
      chatInputTokens: chatRequests.inputTokens,
      chatOutputTokens: chatRequests.outputTokens,
      paymentId: payments.id,
      paymentTokens: payments.tokensAmount,
      paymentPackage: payments.packageType,
    })
    .from(tokenLedger)
    // References are "<kind>:<id>"; the casts are guarded by the prefix so the joins stay
    // primary-key lookups.
    .leftJoin(
      generationRequests,
      sql`${generationRequests.id} = (case when ${tokenLedger.reference} ~ '^generation_request:[0-9]{1,9}$'
        then substr(${tokenLedger.reference}, 20)::int end)`,
    )
    .leftJoin(
      chatRequests,
      sql`${chatRequests.id} = (case when ${tokenLedger.reference} ~ '^chat_request:[0-9]{1,9}$'
        then substr(${tokenLedger.reference}, 14)::int end)`,
    )
    .leftJoin(
      payments,
      sql`${payments.id} = (case when ${tokenLedger.reference} like 'payment:%' then substr(${tokenLedger.reference}, 9) end)`,
    )
    .where(eq(tokenLedger.userId, userId))
    .orderBy(desc(tokenLedger.id))
    .limit(limit)
    .offset((page - 1) * limit);
  const totals = await db.select({ n: count() }).from(tokenLedger).where(eq(tokenLedger.userId, userId));
  return { rows, total: Number(totals[0]?.n ?? 0) };
}

// --- refunds -----------------------------------------------------------------------------

/** Our payment's refunds, oldest attempt first. */
export async function refundsOf(db: Executor, paymentId: string): Promise<RefundRow[]> {
  return db
    .select()
    .from(paymentRefunds)
    .where(eq(paymentRefunds.paymentId, paymentId))
    .orderBy(paymentRefunds.attempt, paymentRefunds.id);
}

export async function refundsOfPayments(db: Executor, paymentIds: string[]): Promise<RefundRow[]> {
  if (paymentIds.length === 0) return [];
  return db
    .select()
    .from(paymentRefunds)
    .where(inArray(paymentRefunds.paymentId, paymentIds))
    .orderBy(paymentRefunds.id);
}

/**
 * Records the provider's word on a refund: the row once (keyed by the provider's id), and its
 * status while it is pending (succeeded and canceled are final).
 */
export async function upsertRefund(db: Executor, row: NewRefund): Promise<RefundRow> {
  await db.insert(paymentRefunds).values(row).onConflictDoNothing();
  await db
    .update(paymentRefunds)
    .set({ status: row.status, cancellationReason: row.cancellationReason ?? null, updatedAt: new Date() })
    .where(and(eq(paymentRefunds.providerRefundId, row.providerRefundId), eq(paymentRefunds.status, 'pending')));
  const rows = await db.select().from(paymentRefunds).where(eq(paymentRefunds.providerRefundId, row.providerRefundId));
  const stored = rows[0];
  if (!stored) throw new Error(`refund ${row.providerRefundId} not recorded`);
  return stored;
}

/** Marks a succeeded refund settled, once; the caller writes its ledger row in the same transaction. */
export async function claimRefundSettlement(db: Executor, providerRefundId: string): Promise<RefundRow | undefined> {
  const rows = await db
    .update(paymentRefunds)
    .set({ settledAt: new Date(), updatedAt: new Date() })
    .where(
      and(
        eq(paymentRefunds.providerRefundId, providerRefundId),
        eq(paymentRefunds.status, 'succeeded'),
        isNull(paymentRefunds.settledAt),
      ),
    )
    .returning();
  return rows[0];
}

export async function setRefundTokens(db: Executor, id: number, taken: number, unrecovered: number): Promise<void> {
  await db
    .update(paymentRefunds)
    .set({ tokensTaken: taken, tokensUnrecovered: unrecovered, updatedAt: new Date() })
    .where(eq(paymentRefunds.id, id));
}

/** The user's balance, locked until the transaction ends (nothing spends it meanwhile). */
export async function lockBalance(db: Executor, userId: number): Promise<number> {
  const rows = await db.select({ balance: users.tokensAmount }).from(users).where(eq(users.id, userId)).for('update');
  return rows[0]?.balance ?? 0;
}
