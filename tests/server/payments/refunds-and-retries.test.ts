// One file: every refund and retry path of a payment against one fake YooKassa and one ledger
// check.
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { paymentSchema } from '../../../src/domain/billing';
import { AdminService } from '../../../server/admin/service';
import { payments } from '../../../server/db/schema';
import { testDatabases, type TestApp } from '../helpers';
import { expectLedgerConsistent, getJson, postJson, signedInUser, spend, type TestUser } from '../images/support';
import { FakeYookassa } from '../providers/payments/fake-yookassa';
import {
  accountOf,
  buyTokens,
  historyOf,
  providerIdOf,
  startYookassaApp,
  subscriptionOf,
  subscriptionView,
  webhook,
} from './support';

// Issue #25, items 11, 4, 2 and 3: the YooKassa billing's money bugs, each through our API with
// the balance and the ledger read before and after.

/** Every payment the fake holds for this user (whichever tab or instance opened it). */
function providerPaymentsOf(fake: FakeYookassa, user: TestUser) {
  return [...fake.payments.values()].filter((p) => p.metadata.userId === String(user.id));
}

describe.each(testDatabases())(
  'YooKassa refunds, trials and refused renewals on $name',
  { timeout: 180_000 },
  (kind) => {
    let fake: FakeYookassa;
    let app: TestApp | undefined;
    beforeAll(async () => {
      fake = await new FakeYookassa().start();
    });
    afterAll(async () => {
      await fake.stop();
    });
    afterEach(async () => {
      await app?.close();
      app = undefined;
      fake.reset();
    });

    /** A user who bought 1000 tokens, paid and credited (a balance of 1050 with the signup's 50). */
    async function creditedBuyer(app: TestApp, email: string) {
      const user = await signedInUser(app, email);
      const { paymentId, providerId } = await buyTokens(app, user, 1000);
      fake.decide(providerId, { status: 'succeeded' });
      expect(await webhook(app, fake.notification(providerId))).toBe(200);
      return { user, paymentId, providerId };
    }

    // Item 11: "Four tabs (or four double clicks) gave 4,000 tokens for 0 RUB."
    it('item 11: four pro subscribe clicks open one 1 RUB card check; paying everything grants the trial once', async () => {
      app = await startYookassaApp(kind, fake);
      const user = await signedInUser(app, 'four-tabs@example.com');
      const before = await accountOf(app, user);
      expect(before.balance).toBe(50);

      const answers: Array<{ paymentId: string; confirmationUrl: string; amount: string }> = [];
      for (let tab = 0; tab < 4; tab += 1) {
        const created = await postJson(app, user, '/api/payments/create-subscription-payment', { plan: 'pro' });
        expect(created.status).toBe(200);
        answers.push(created.body.data as (typeof answers)[number]);
      }
      // The customer pays whatever checks YooKassa holds for them, each notified.
      const checks = providerPaymentsOf(fake, user);
      for (const check of checks) {
        fake.decide(check.id, { status: 'succeeded' });
        expect(await webhook(app, fake.notification(check.id))).toBe(200);
      }

      const after = await accountOf(app, user);
      expect(after.balance).toBe(1050);
      expect(after.entries.filter((e) => e.delta > 0 && e.kind !== 'signup').map((e) => e.delta)).toEqual([1000]);
      // The same check each time (reused), never a second one.
      expect(new Set(answers.map((a) => a.paymentId)).size).toBe(1);
      expect(new Set(answers.map((a) => a.confirmationUrl)).size).toBe(1);
      expect(answers[0]?.amount).toBe('1.00');

      expect(checks).toHaveLength(1);
      expect(await subscriptionView(app, user)).toMatchObject({ status: 'trial', plan: { name: 'pro' } });
      // Every check paid is refunded.
      for (const check of checks) {
        expect(fake.refunds.filter((r) => r.payment_id === check.id && r.status === 'succeeded')).toHaveLength(1);
      }
      await expectLedgerConsistent(app, user);
    });

    it('item 11: a second check that is paid anyway (opened before the fix, or superseded) grants nothing and is refunded', async () => {
      app = await startYookassaApp(kind, fake);
      const user = await signedInUser(app, 'stale-check@example.com');
      const first = await postJson(app, user, '/api/payments/create-subscription-payment', { plan: 'pro' });
      const firstId = (first.body.data as { paymentId: string }).paymentId;
      // Premium chosen in another tab supersedes the pending pro check...
      const premium = await postJson(app, user, '/api/payments/create-subscription-payment', { plan: 'premium' });
      expect(premium.body.data).toMatchObject({ amount: '1400.00' });
      const old = paymentSchema.parse((await getJson(app, user, `/api/payments/${firstId}`)).body.data);
      expect(old).toMatchObject({ status: 'canceled', cancellationReason: 'superseded' });
      // ...and pro again opens a fresh check.
      const again = await postJson(app, user, '/api/payments/create-subscription-payment', { plan: 'pro' });
      const againId = (again.body.data as { paymentId: string }).paymentId;
      expect(againId).not.toBe(firstId);

      // The customer pays both pro checks anyway: one trial, 1000 tokens, both refunded.
      for (const id of [againId, firstId]) {
        const providerId = await providerIdOf(app, id);
        fake.decide(providerId, { status: 'succeeded' });
        expect(await webhook(app, fake.notification(providerId))).toBe(200);
        expect(fake.refunds.filter((r) => r.payment_id === providerId && r.status === 'succeeded')).toHaveLength(1);
      }
      const after = await accountOf(app, user);
      expect(after.balance).toBe(1050);
      expect(after.entries.filter((e) => e.kind === 'subscription_grant' || e.kind === 'purchase')).toHaveLength(1);
      await expectLedgerConsistent(app, user);
    });

    // Item 4: "the renewal job sends the same request with the same Idempotence-Key on every run".
    it('item 4: a renewal refused with 403 is a failed attempt: past_due, retried under a new key after the interval, cancelled after the retries', async () => {
      app = await startYookassaApp(kind, fake, {
        SUBSCRIPTION_MAX_RETRIES: '2',
        SUBSCRIPTION_RETRY_INTERVAL_MS: '3600000',
      });
      const user = await signedInUser(app, 'no-autopay@example.com');
      const created = await postJson(app, user, '/api/payments/create-subscription-payment', { plan: 'premium' });
      const providerId = await providerIdOf(app, (created.body.data as { paymentId: string }).paymentId);
      fake.decide(providerId, { status: 'succeeded' });
      expect(await webhook(app, fake.notification(providerId))).toBe(200);
      const before = await accountOf(app, user);
      expect(before.balance).toBe(2550);

      // Autopayments not enabled for the shop: YooKassa answers 403 with its error body.
      fake.recurringError = {
        status: 403,
        code: 'forbidden',
        description: 'Recurring payments are not available for this shop',
        parameter: 'payment_method_id',
      };
      const end = (await subscriptionOf(app, user.id))?.periodEnd?.getTime() ?? 0;
      const charges = () => fake.calls.filter((c) => c.method === 'POST' && c.body?.payment_method_id);
      const renew = (at: number) => app?.services.payments.renew(new Date(at));

      expect(await renew(end + 1000)).toMatchObject({ failed: 1, renewed: 0 });
      expect(await subscriptionView(app, user)).toMatchObject({ status: 'past_due' });
      expect((await getJson(app, user, '/auth/me')).body.data).toMatchObject({ subscriptionStatus: 'past_due' });
      // No renewal left pending in the history: it failed, with YooKassa's code.
      const history = await historyOf(app, user);
      expect(history.filter((p) => p.status === 'pending')).toHaveLength(0);
      const renewal = history.find((p) => p.packageType === 'premium' && p.id !== history.at(-1)?.id);
      expect(renewal?.status).toBe('canceled');
      const detail = paymentSchema.parse((await getJson(app, user, `/api/payments/${renewal?.id}`)).body.data);
      expect(detail.cancellationReason).toBe('forbidden');

      // Not again before the retry interval.
      expect(await renew(end + 2000)).toMatchObject({ failed: 0, renewed: 0 });
      expect(charges()).toHaveLength(1);
      expect(await renew(end + 3_700_000)).toMatchObject({ failed: 1 });
      expect(await renew(end + 7_400_000)).toMatchObject({ failed: 1 });
      expect(await subscriptionView(app, user)).toBeNull();
      expect((await subscriptionOf(app, user.id))?.status).toBe('cancelled');
      expect(charges()).toHaveLength(3);
      expect(new Set(charges().map((c) => c.idempotenceKey)).size).toBe(3);
      // Nothing more once cancelled.
      expect(await renew(end + 20_000_000)).toMatchObject({ failed: 0, renewed: 0, ended: 0 });
      expect(charges()).toHaveLength(3);

      // Premium's paid tokens stay; no ledger row came from the refused charges.
      const after = await accountOf(app, user);
      expect(after.balance).toBe(2550);
      expect(after.entries).toEqual(before.entries);
      await expectLedgerConsistent(app, user);
    });

    // Item 2: "A canceled refund is never retried and a pending one never followed".
    it('item 2: the card check refund is followed until it succeeds: pending re-read, canceled asked again under a new key; the history shows it', async () => {
      app = await startYookassaApp(kind, fake);
      const user = await signedInUser(app, 'slow-refund@example.com');
      fake.refundOutcomes.push('pending');
      const created = await postJson(app, user, '/api/payments/create-subscription-payment', { plan: 'pro' });
      const paymentId = (created.body.data as { paymentId: string }).paymentId;
      const providerId = await providerIdOf(app, paymentId);
      fake.decide(providerId, { status: 'succeeded' });
      expect(await webhook(app, fake.notification(providerId))).toBe(200);
      const before = await accountOf(app, user);
      expect(before.balance).toBe(1050);

      const refundsOfCheck = () => fake.refunds.filter((r) => r.payment_id === providerId);
      const check = async () => (await historyOf(app as TestApp, user)).find((p) => p.id === paymentId);
      expect(refundsOfCheck()).toHaveLength(1);
      expect((await check())?.refund).toEqual({ status: 'pending', amount: '1.00' });

      // Still pending at YooKassa: re-read, not asked again.
      const later = (minutes: number) => new Date(Date.now() + minutes * 60_000);
      await app.services.payments.reconcile(later(15));
      const firstRefund = refundsOfCheck()[0];
      expect(fake.calls.filter((c) => c.method === 'GET' && c.path === `/refunds/${firstRefund?.id}`)).toHaveLength(1);
      expect(refundsOfCheck()).toHaveLength(1);

      // The bank declines it: the next run asks for a new refund under a new key.
      fake.decideRefund(firstRefund?.id ?? '', { status: 'canceled', reason: 'rejected_by_payee' });
      await app.services.payments.reconcile(later(30));
      const refundPosts = () =>
        fake.calls.filter((c) => c.method === 'POST' && c.path === '/refunds' && c.body?.payment_id === providerId);
      const posts = refundPosts();
      expect(posts).toHaveLength(2);
      expect(new Set(posts.map((p) => p.idempotenceKey)).size).toBe(2);
      expect(refundsOfCheck().map((r) => r.status)).toEqual(['canceled', 'succeeded']);
      expect((await check())?.refund).toEqual({ status: 'succeeded', amount: '1.00' });

      // Done: nothing more is asked.
      await app.services.payments.reconcile(later(45));
      expect(refundPosts()).toHaveLength(2);
      // A stop between storing the succeeded refund and marking the payment refunded: the next
      // run only marks it, and gives the customer nothing a second time.
      await app.database.db.update(payments).set({ refundedAt: null }).where(eq(payments.id, paymentId));
      await app.services.payments.reconcile(later(60));
      expect(refundPosts()).toHaveLength(2);
      const [marked] = await app.database.db.select().from(payments).where(eq(payments.id, paymentId));
      expect(marked?.refundedAt).not.toBeNull();
      // The refund of a card check takes no tokens.
      const after = await accountOf(app, user);
      expect(after.balance).toBe(1050);
      expect(after.entries).toEqual(before.entries);
      await expectLedgerConsistent(app, user);
    });

    // docs/billing.md "Refunds are followed until they succeed": the first refund of a card
    // check is asked for under `refund:<paymentId>`. A call whose answer was lost is asked again
    // under the same key, so YooKassa answers with the refund it made instead of a second one.
    it('item 2: a card check refund whose answers were lost is asked again under the same key and made once', async () => {
      app = await startYookassaApp(kind, fake);
      const user = await signedInUser(app, 'lost-refund@example.com');
      const created = await postJson(app, user, '/api/payments/create-subscription-payment', { plan: 'pro' });
      const paymentId = (created.body.data as { paymentId: string }).paymentId;
      const providerId = await providerIdOf(app, paymentId);
      // YooKassa makes the refund, and every answer to it (the first and YOOKASSA_RETRIES=3 more) is cut.
      fake.failuresOf.set(
        'POST /refunds',
        Array.from({ length: 4 }, () => ({ kind: 'cut' as const, after: true })),
      );
      fake.decide(providerId, { status: 'succeeded' });
      expect(await webhook(app, fake.notification(providerId))).toBe(200);
      const [waiting] = await app.database.db.select().from(payments).where(eq(payments.id, paymentId));
      expect(waiting?.refundedAt).toBeNull();

      await app.services.payments.reconcile(new Date(Date.now() + 15 * 60_000));
      const posts = fake.calls.filter(
        (c) => c.method === 'POST' && c.path === '/refunds' && c.body?.payment_id === providerId,
      );
      expect(posts.length).toBeGreaterThan(4);
      expect(new Set(posts.map((p) => p.idempotenceKey))).toEqual(new Set([`refund:${paymentId}`]));
      expect(posts[0]?.body?.amount).toEqual({ value: '1.00', currency: 'RUB' });
      expect(fake.refunds.filter((r) => r.payment_id === providerId)).toHaveLength(1);
      const [refunded] = await app.database.db.select().from(payments).where(eq(payments.id, paymentId));
      expect(refunded?.refundedAt).not.toBeNull();
      const row = (await historyOf(app, user)).find((p) => p.id === paymentId);
      expect(row?.refund).toEqual({ status: 'succeeded', amount: '1.00' });
      await expectLedgerConsistent(app, user);
    });

    // YooKassa also notifies refund.succeeded for the refunds we asked for: a card check's
    // pending refund is then done at once, takes nothing, and is not asked for again.
    it('item 2: the notification that a pending card check refund succeeded marks it refunded, taking nothing', async () => {
      app = await startYookassaApp(kind, fake);
      const user = await signedInUser(app, 'notified-refund@example.com');
      fake.refundOutcomes.push('pending');
      const created = await postJson(app, user, '/api/payments/create-subscription-payment', { plan: 'pro' });
      const paymentId = (created.body.data as { paymentId: string }).paymentId;
      const providerId = await providerIdOf(app, paymentId);
      fake.decide(providerId, { status: 'succeeded' });
      expect(await webhook(app, fake.notification(providerId))).toBe(200);
      const before = await accountOf(app, user);
      const [refund] = fake.refunds.filter((r) => r.payment_id === providerId);
      fake.decideRefund(refund?.id ?? '', { status: 'succeeded' });

      expect(await webhook(app, fake.refundNotification(refund?.id ?? ''))).toBe(200);
      const [row] = await app.database.db.select().from(payments).where(eq(payments.id, paymentId));
      expect(row?.refundedAt).not.toBeNull();
      expect((await historyOf(app, user)).find((p) => p.id === paymentId)?.refund).toEqual({
        status: 'succeeded',
        amount: '1.00',
      });
      await app.services.payments.reconcile(new Date(Date.now() + 15 * 60_000));
      const asked = fake.calls.filter((c) => c.method === 'POST' && c.path === '/refunds');
      expect(asked.filter((c) => c.body?.payment_id === providerId)).toHaveLength(1);
      const after = await accountOf(app, user);
      expect(after.entries).toEqual(before.entries);
      await expectLedgerConsistent(app, user);
    });

    // docs/billing.md "refund.succeeded notifications": floor(tokens × refunded ÷ paid) is taken back.
    it('item 3: a part refund takes back the tokens it paid for, rounded down', async () => {
      app = await startYookassaApp(kind, fake);
      // 1000 tokens for 700.00 RUB.
      const { user, providerId } = await creditedBuyer(app, 'part-refund@example.com');
      const tenth = fake.dashboardRefund(providerId, '100.00');
      expect(await webhook(app, fake.refundNotification(tenth.id))).toBe(200);
      const rest = fake.dashboardRefund(providerId, '600.00');
      expect(await webhook(app, fake.refundNotification(rest.id))).toBe(200);
      const after = await accountOf(app, user);
      // 1000 × 100 / 700 = 142.9 and 1000 × 600 / 700 = 857.1.
      expect(after.entries.filter((e) => e.kind === 'payment_refund').map((e) => e.delta)).toEqual([-857, -142]);
      expect(after.balance).toBe(1050 - 142 - 857);
      expect(await new AdminService(app.database.db, app.services.ledger).unrecoveredRefunds()).toEqual([]);
      await expectLedgerConsistent(app, user);
    });

    // Item 3: "A purchase refunded from the shop's dashboard leaves the tokens credited".
    it('item 3: refund.succeeded from the dashboard takes back the tokens, once, with a ledger row', async () => {
      app = await startYookassaApp(kind, fake);
      const { user, paymentId, providerId } = await creditedBuyer(app, 'refunded-buyer@example.com');
      const before = await accountOf(app, user);
      expect(before.balance).toBe(1050);

      // A forged notification (YooKassa does not know the refund) changes nothing.
      expect(
        await webhook(app, {
          type: 'notification',
          event: 'refund.succeeded',
          object: { id: 'rf-forged', payment_id: providerId, status: 'succeeded', amount: { value: '700.00' } },
        }),
      ).toBe(200);
      expect((await accountOf(app, user)).balance).toBe(1050);

      // Half refunded from the dashboard, then the rest; each notification delivered twice.
      const half = fake.dashboardRefund(providerId, '350.00');
      expect(await webhook(app, fake.refundNotification(half.id))).toBe(200);
      expect(await webhook(app, fake.refundNotification(half.id))).toBe(200);
      expect((await accountOf(app, user)).balance).toBe(550);
      const rest = fake.dashboardRefund(providerId, '350.00');
      expect(await webhook(app, fake.refundNotification(rest.id))).toBe(200);
      expect(await webhook(app, fake.refundNotification(rest.id))).toBe(200);

      const after = await accountOf(app, user);
      expect(after.balance).toBe(50);
      const takes = after.entries.filter((e) => e.kind === 'payment_refund');
      expect(takes.map((e) => e.delta)).toEqual([-500, -500]);
      // For the operator, each take-back names the payment its tokens were credited for.
      const { entries } = await new AdminService(app.database.db, app.services.ledger).ledgerOf(String(user.id));
      const credit = entries.find((e) => e.delta === 1000);
      expect(credit?.reference).toMatch(/^payment:/);
      expect(entries.filter((e) => e.reason === 'payment_refund').map((e) => e.reference)).toEqual([
        credit?.reference,
        credit?.reference,
      ]);
      const row = (await historyOf(app, user)).find((p) => p.id === paymentId);
      expect(row?.refund).toEqual({ status: 'succeeded', amount: '700.00' });
      expect(await new AdminService(app.database.db, app.services.ledger).unrecoveredRefunds()).toEqual([]);
      await expectLedgerConsistent(app, user);
    });

    // A refund's notification can overtake the payment's own (or our credit may have failed):
    // the payment is re-read and credited first, so the refund has tokens to take back, and the
    // late payment.succeeded credits nothing more.
    it('item 3: a refund of a payment not yet credited credits it first, then takes back its share, once', async () => {
      app = await startYookassaApp(kind, fake);
      const user = await signedInUser(app, 'refund-first@example.com');
      const { providerId } = await buyTokens(app, user, 1000);
      fake.decide(providerId, { status: 'succeeded' });
      expect((await accountOf(app, user)).balance).toBe(50);

      const half = fake.dashboardRefund(providerId, '350.00');
      expect(await webhook(app, fake.refundNotification(half.id))).toBe(200);
      const after = await accountOf(app, user);
      expect(after.balance).toBe(550);
      // The ledger lists the newest first.
      expect(after.entries.map((e) => e.delta)).toEqual([-500, 1000, 50]);

      expect(await webhook(app, fake.notification(providerId))).toBe(200);
      await app.services.payments.reconcile(new Date(Date.now() + 60 * 60_000));
      expect((await accountOf(app, user)).balance).toBe(550);
      await expectLedgerConsistent(app, user);
    });

    it('item 3: with nothing left to take, the refund writes no ledger row and records all of it as not taken back', async () => {
      app = await startYookassaApp(kind, fake);
      const { user, paymentId, providerId } = await creditedBuyer(app, 'spent-all@example.com');
      await spend(app, user, 1050);

      const refund = fake.dashboardRefund(providerId, '700.00');
      expect(await webhook(app, fake.refundNotification(refund.id))).toBe(200);
      const after = await accountOf(app, user);
      expect(after.balance).toBe(0);
      expect(after.entries.filter((e) => e.kind === 'payment_refund')).toEqual([]);
      expect(await new AdminService(app.database.db, app.services.ledger).unrecoveredRefunds()).toEqual([
        expect.objectContaining({ refundId: refund.id, paymentId, tokensTaken: 0, tokensUnrecovered: 1000 }),
      ]);
      await expectLedgerConsistent(app, user);
    });

    // YooKassa delivers a notification again until it is answered 200 (its webhook reference):
    // one that cannot be settled now must not be acknowledged, and one about nothing of ours must.
    it('item 3: a refund notification YooKassa cannot confirm now is answered 503 and settled when delivered again', async () => {
      app = await startYookassaApp(kind, fake);
      const { user, providerId } = await creditedBuyer(app, 'refund-later@example.com');
      const refund = fake.dashboardRefund(providerId, '700.00');

      // Every attempt at re-reading the refund (the first and YOOKASSA_RETRIES=3 more) fails.
      fake.failures.push(...Array.from({ length: 4 }, () => ({ kind: 'error' as const, status: 500 })));
      expect(await webhook(app, fake.refundNotification(refund.id))).toBe(503);
      expect((await accountOf(app, user)).balance).toBe(1050);

      expect(await webhook(app, fake.refundNotification(refund.id))).toBe(200);
      expect((await accountOf(app, user)).balance).toBe(50);
      await expectLedgerConsistent(app, user);

      // A refund of a payment that is not ours (another shop's, or one we never stored).
      const stranger = fake.dashboardRefund('2f3b0c1e-000f-5000-8000-1b2c3d4e5f60', '10.00');
      expect(await webhook(app, fake.refundNotification(stranger.id))).toBe(200);
      expect((await accountOf(app, user)).balance).toBe(50);
    });

    it('item 3: what was already spent is not taken (the balance never goes negative) and the admin tool lists it', async () => {
      app = await startYookassaApp(kind, fake);
      const { user, paymentId, providerId } = await creditedBuyer(app, 'spent-it@example.com');
      await spend(app, user, 900);
      expect((await accountOf(app, user)).balance).toBe(150);

      const refund = fake.dashboardRefund(providerId, '700.00');
      expect(await webhook(app, fake.refundNotification(refund.id))).toBe(200);
      expect(await webhook(app, fake.refundNotification(refund.id))).toBe(200);
      const after = await accountOf(app, user);
      expect(after.balance).toBe(0);
      expect(after.entries.filter((e) => e.kind === 'payment_refund').map((e) => e.delta)).toEqual([-150]);
      const listed = await new AdminService(app.database.db, app.services.ledger).unrecoveredRefunds();
      expect(listed).toEqual([
        expect.objectContaining({
          refundId: refund.id,
          paymentId,
          userId: user.id,
          email: 'spent-it@example.com',
          refundedKopecks: 70_000,
          tokensTaken: 150,
          tokensUnrecovered: 850,
        }),
      ]);
      await expectLedgerConsistent(app, user);
    });
  },
);
