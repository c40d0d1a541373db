import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { subscriptions } from '../../../server/db/schema';
import { entriesFor } from '../../../server/ledger/repository';
import { testDatabases, type TestApp } from '../helpers';
import {
  balance,
  expectLedgerConsistent,
  getJson,
  postJson,
  signedInUser,
  spend,
  type TestUser,
} from '../images/support';
import { FakeYookassa } from '../providers/payments/fake-yookassa';
import {
  buyTokens,
  paymentRows,
  periodEndOf,
  providerIdOf,
  startYookassaApp,
  subscribe,
  subscriptionOf,
  subscriptionView,
  webhook,
} from './support';

// docs/billing.md, "Subscriptions": a subscription's periods after the first, how each ends,
// and what the user's record says about them (SPEC's User: subscriptionType,
// subscriptionTokensUsed; the Subscription response: tokensUsedThisPeriod, nextBillingDate).

/** A 500 that asks for no pause: the adapter's every attempt fails at once (YOOKASSA_RETRIES 3). */
const UNREACHABLE = Array.from({ length: 4 }, () => ({ kind: 'error' as const, status: 500, retryAfter: 0 }));

async function me(app: TestApp, user: TestUser) {
  return (await getJson(app, user, '/auth/me')).body.data as Record<string, unknown>;
}

async function expiries(app: TestApp, user: TestUser) {
  return (await entriesFor(app.database.db, user.id))
    .filter((e) => e.reason === 'subscription_expiry')
    .map((e) => e.delta);
}

async function cancel(app: TestApp, user: TestUser) {
  return postJson(app, user, '/api/payments/cancel-subscription', {});
}

describe.each(testDatabases())('subscription periods on $name', { timeout: 180_000 }, (kind) => {
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

  /** The renewal job at a moment of the test's choosing. */
  function renewAt(at: Date | number) {
    if (!app) throw new Error('no app');
    return app.services.payments.renew(new Date(at));
  }

  it('a period runs a calendar month from the last one’s end (31 January to 28 February); a past_due one restarts when paid', async () => {
    app = await startYookassaApp(kind, fake, {
      YOOKASSA_RECEIPTS: 'true',
      SUBSCRIPTION_RETRY_INTERVAL_MS: '3600000',
    });
    const user = await signedInUser(app, 'calendar@example.com');
    await subscribe(app, fake, user, 'premium');
    await app.database.db
      .update(subscriptions)
      .set({ periodEnd: new Date('2027-01-31T10:00:00Z') })
      .where(eq(subscriptions.userId, user.id));

    expect(await renewAt(Date.parse('2027-01-31T10:00:01Z'))).toEqual({ renewed: 1, failed: 0, ended: 0 });
    expect((await subscriptionView(app, user))?.nextBillingDate).toBe('2027-02-28T10:00:00.000Z');
    const [renewal] = (await paymentRows(app, user.id)).filter((p) => p.purpose === 'renewal');
    const charge = fake.postsWithKey(`payment:${renewal?.id}`);
    expect(charge).toHaveLength(1);
    expect(charge[0]?.body).toMatchObject({
      amount: { value: '1400.00', currency: 'RUB' },
      description: 'Premium subscription renewal',
      metadata: { paymentId: renewal?.id, userId: String(user.id) },
      receipt: { customer: { email: 'calendar@example.com' } },
    });

    fake.recurring = { status: 'canceled', reason: 'insufficient_funds' };
    expect(await renewAt(Date.parse('2027-02-28T10:00:01Z'))).toMatchObject({ failed: 1 });
    expect(await subscriptionView(app, user)).toMatchObject({ status: 'past_due' });
    fake.recurring = { status: 'succeeded' };
    expect(await renewAt(Date.parse('2027-02-28T11:00:01Z'))).toMatchObject({ renewed: 1 });
    expect(await subscriptionView(app, user)).toMatchObject({
      status: 'active',
      nextBillingDate: '2027-03-28T11:00:01.000Z',
    });
    await expectLedgerConsistent(app, user);
  });

  it('a renewal YooKassa does not answer stays active and is asked again, under the same key, on the next run', async () => {
    app = await startYookassaApp(kind, fake);
    const user = await signedInUser(app, 'unanswered@example.com');
    await subscribe(app, fake, user, 'premium');
    const end = (await periodEndOf(app, user)).getTime();
    fake.failures.push(...UNREACHABLE);
    expect(await renewAt(end + 1000)).toEqual({ renewed: 0, failed: 0, ended: 0 });
    expect(fake.failures).toHaveLength(0);
    expect(await subscriptionView(app, user)).toMatchObject({ status: 'active' });
    expect(await renewAt(end + 2000)).toEqual({ renewed: 1, failed: 0, ended: 0 });
    const renewals = (await paymentRows(app, user.id)).filter((p) => p.purpose === 'renewal');
    expect(renewals).toHaveLength(1);
    expect(fake.postsWithKey(`payment:${renewals[0]?.id}`)).toHaveLength(5);
    expect(await balance(app, user)).toBe(2550 + 2500);
  });

  it('a renewal charge YooKassa holds pending counts as nothing yet, and is read again on the next run', async () => {
    app = await startYookassaApp(kind, fake);
    const user = await signedInUser(app, 'held@example.com');
    await subscribe(app, fake, user, 'premium');
    const end = (await periodEndOf(app, user)).getTime();
    fake.recurring = { status: 'pending' };
    expect(await renewAt(end + 1000)).toEqual({ renewed: 0, failed: 0, ended: 0 });
    expect(await subscriptionView(app, user)).toMatchObject({ status: 'active' });
    const [renewal] = (await paymentRows(app, user.id)).filter((p) => p.purpose === 'renewal');
    const providerId = await providerIdOf(app, renewal?.id ?? '');
    fake.decide(providerId, { status: 'succeeded' });
    expect(await renewAt(end + 2000)).toEqual({ renewed: 1, failed: 0, ended: 0 });
    expect(fake.postsWithKey(`payment:${renewal?.id}`)).toHaveLength(1);
    expect(await balance(app, user)).toBe(2550 + 2500);
  });

  it('a trial whose card YooKassa did not save ends at the trial’s end, charging nothing', async () => {
    app = await startYookassaApp(kind, fake);
    const user = await signedInUser(app, 'unsaved-card@example.com');
    const created = await postJson(app, user, '/api/payments/create-subscription-payment', { plan: 'pro' });
    const providerId = await providerIdOf(app, (created.body.data as { paymentId: string }).paymentId);
    const wire = fake.decide(providerId, { status: 'succeeded' });
    wire.payment_method = { type: 'bank_card', id: `pm-${providerId}`, saved: false };
    expect(await webhook(app, fake.notification(providerId))).toBe(200);
    expect(await subscriptionView(app, user)).toMatchObject({ status: 'trial' });
    const end = (await periodEndOf(app, user)).getTime();
    const charges = () => fake.calls.filter((c) => c.method === 'POST' && c.body?.payment_method_id).length;
    const before = charges();
    expect(await renewAt(end + 1000)).toEqual({ renewed: 0, failed: 0, ended: 1 });
    expect(charges()).toBe(before);
    expect(await subscriptionView(app, user)).toBeNull();
    expect(await balance(app, user)).toBe(50);
    expect(await me(app, user)).toMatchObject({ subscriptionType: 'payg', subscriptionStatus: 'active' });
  });

  it('a subscription that ends with no tokens left leaves the user on starter', async () => {
    app = await startYookassaApp(kind, fake);
    const user = await signedInUser(app, 'spent-all@example.com');
    await subscribe(app, fake, user, 'pro');
    await spend(app, user, 1050);
    expect((await cancel(app, user)).status).toBe(200);
    const end = (await periodEndOf(app, user)).getTime();
    expect(await renewAt(end + 1000)).toEqual({ renewed: 0, failed: 0, ended: 1 });
    expect(await me(app, user)).toMatchObject({
      tokensAmount: 0,
      subscriptionType: 'starter',
      subscriptionStatus: 'active',
      subscriptionTokensTotal: 0,
      nextBillingDate: null,
    });
    expect(await expiries(app, user)).toEqual([]);
  });

  it('tokens used this period never exceed the period’s; cancelling twice keeps the first time; the end keeps it too', async () => {
    app = await startYookassaApp(kind, fake);
    const nobody = await signedInUser(app, 'no-subscription@example.com');
    const none = await cancel(app, nobody);
    expect(none.status).toBe(404);
    expect(none.body).toMatchObject({ success: false, code: 'NOT_FOUND', message: 'No active subscription' });

    const user = await signedInUser(app, 'heavy-user@example.com');
    await subscribe(app, fake, user, 'pro');
    await spend(app, user, 300);
    expect(await me(app, user)).toMatchObject({ subscriptionTokensTotal: 1000, subscriptionTokensUsed: 300 });
    const bought = await buyTokens(app, user, 500);
    fake.decide(bought.providerId, { status: 'succeeded' });
    expect(await webhook(app, fake.notification(bought.providerId))).toBe(200);
    await spend(app, user, 900);
    expect(await me(app, user)).toMatchObject({ subscriptionTokensUsed: 1000, tokensAmount: 350 });
    expect(await subscriptionView(app, user)).toMatchObject({ tokensUsedThisPeriod: 1000 });

    const first = await cancel(app, user);
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({ tokensUsedThisPeriod: 1000, cancelAtPeriodEnd: true });
    const canceledAt = (first.body.data as { canceledAt: string }).canceledAt;
    const second = await cancel(app, user);
    expect(second.status).toBe(200);
    expect(second.body.data).toMatchObject({ canceledAt, cancelAtPeriodEnd: true, tokensUsedThisPeriod: 1000 });

    const end = (await periodEndOf(app, user)).getTime();
    expect(await renewAt(end + 1000)).toMatchObject({ ended: 1 });
    const row = await subscriptionOf(app, user.id);
    expect(row?.canceledAt?.toISOString()).toBe(canceledAt);
    expect(row?.endedAt?.getTime()).toBe(end + 1000);
    // Everything of the period was spent: nothing expires, the bought tokens stay.
    expect(await expiries(app, user)).toEqual([]);
    expect(await balance(app, user)).toBe(350);
  });

  it("pro's unused tokens expire at every renewal and at every end, for each user", async () => {
    app = await startYookassaApp(kind, fake);
    const renewing = await signedInUser(app, 'every-month@example.com');
    await subscribe(app, fake, renewing, 'pro');
    const trialEnd = (await periodEndOf(app, renewing)).getTime();
    expect(await renewAt(trialEnd + 1000)).toMatchObject({ renewed: 1 });
    const monthEnd = (await periodEndOf(app, renewing)).getTime();
    await spend(app, renewing, 100);
    expect(await renewAt(monthEnd + 1000)).toMatchObject({ renewed: 1 });
    // The trial's 1000 unused, then 900 of the first month's.
    expect(await expiries(app, renewing)).toEqual([-1000, -900]);
    expect(await balance(app, renewing)).toBe(1050);
    await expectLedgerConsistent(app, renewing);

    const leavers = [await signedInUser(app, 'leaves-a@example.com'), await signedInUser(app, 'leaves-b@example.com')];
    let lastEnd = 0;
    for (const leaver of leavers) {
      await subscribe(app, fake, leaver, 'pro');
      expect((await cancel(app, leaver)).status).toBe(200);
      lastEnd = Math.max(lastEnd, (await periodEndOf(app, leaver)).getTime());
    }
    expect(await renewAt(lastEnd + 1000)).toMatchObject({ ended: 2 });
    for (const leaver of leavers) {
      expect(await expiries(app, leaver)).toEqual([-1000]);
      expect(await balance(app, leaver)).toBe(50);
    }
  });

  it('a renewal with every period token spent expires nothing', async () => {
    app = await startYookassaApp(kind, fake);
    const user = await signedInUser(app, 'used-it-all@example.com');
    await subscribe(app, fake, user, 'pro');
    await spend(app, user, 1000);
    const end = (await periodEndOf(app, user)).getTime();
    expect(await renewAt(end + 1000)).toEqual({ renewed: 1, failed: 0, ended: 0 });
    expect(await expiries(app, user)).toEqual([]);
    expect(await balance(app, user)).toBe(1050);
  });

  it('premium had no trial: after it ends, pro starts with the 1 RUB card check', async () => {
    app = await startYookassaApp(kind, fake);
    const user = await signedInUser(app, 'premium-then-pro@example.com');
    await subscribe(app, fake, user, 'premium');
    expect((await cancel(app, user)).status).toBe(200);
    const end = (await periodEndOf(app, user)).getTime();
    expect(await renewAt(end + 1000)).toMatchObject({ ended: 1 });
    const pro = await subscribe(app, fake, user, 'pro');
    expect(pro.created.body.data).toMatchObject({ amount: '1.00' });
    expect(await subscriptionView(app, user)).toMatchObject({ status: 'trial', plan: { name: 'pro' } });
  });
});
