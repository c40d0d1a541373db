import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { entriesFor } from '../../../server/ledger/repository';
import { testDatabases, type TestApp } from '../helpers';
import { balance, expectLedgerConsistent, getJson, postJson, signedInUser, spend } from '../images/support';
import { FakeYookassa } from '../providers/payments/fake-yookassa';
import {
  buyTokens,
  periodEndOf,
  startYookassaApp,
  subscribe,
  subscriptionOf,
  subscriptionView,
  webhook,
} from './support';

const DAY = 24 * 60 * 60_000;

describe.each(testDatabases())('subscriptions on $name', { timeout: 180_000 }, (kind) => {
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

  it('pro: a refunded 1 RUB card check starts the 7-day trial; at its end the price is charged and unused trial tokens expire, bought ones stay', async () => {
    app = await startYookassaApp(kind, fake);
    const user = await signedInUser(app, 'pro@example.com');
    const { paymentId, providerId, created } = await subscribe(app, fake, user, 'pro');
    expect(created.body.data).toMatchObject({ amount: '1.00', currency: 'RUB' });
    const first = fake.postsWithKey(`payment:${paymentId}`)[0];
    expect(first?.body).toMatchObject({ amount: { value: '1.00' }, save_payment_method: true });
    expect(fake.refunds.filter((r) => r.payment_id === providerId)).toEqual([
      expect.objectContaining({ amount: expect.objectContaining({ value: '1.00' }) as unknown }),
    ]);

    const trial = await subscriptionView(app, user);
    expect(trial).toMatchObject({ plan: { name: 'pro', tokensPerMonth: 1000, trialDays: 7 }, status: 'trial' });
    const trialEnd = new Date(trial?.trialEndsAt ?? 0).getTime();
    expect(Math.abs(trialEnd - (Date.now() + 7 * DAY))).toBeLessThan(60_000);
    expect(trial?.nextBillingDate).toBe(trial?.trialEndsAt);
    const me = (await getJson(app, user, '/auth/me')).body.data as Record<string, unknown>;
    expect(me).toMatchObject({ subscriptionType: 'pro', subscriptionStatus: 'trial', subscriptionTokensTotal: 1000 });
    expect(await balance(app, user)).toBe(1050);

    // Tokens bought separately, and some spending.
    const bought = await buyTokens(app, user, 100);
    fake.decide(bought.providerId, { status: 'succeeded' });
    await webhook(app, fake.notification(bought.providerId));
    await spend(app, user, 300);
    expect(await balance(app, user)).toBe(850);
    expect((await subscriptionView(app, user))?.tokensUsedThisPeriod).toBe(300);

    // Not due yet.
    expect(await app.services.payments.renew(new Date(Date.now() + 6 * DAY))).toEqual({
      renewed: 0,
      failed: 0,
      ended: 0,
    });
    const due = new Date(trialEnd + 1000);
    expect(await app.services.payments.renew(due)).toEqual({ renewed: 1, failed: 0, ended: 0 });
    expect(await app.services.payments.renew(due)).toEqual({ renewed: 0, failed: 0, ended: 0 });
    const charges = fake.calls.filter(
      (c) => c.method === 'POST' && c.path === '/payments' && c.body?.payment_method_id,
    );
    expect(charges).toHaveLength(1);
    expect(charges[0]?.body).toMatchObject({ amount: { value: '700.00' }, payment_method_id: `pm-${providerId}` });

    // 700 unused trial tokens expired (never the 150 bought and given), 1000 granted.
    const entries = await entriesFor(app.database.db, user.id);
    expect(entries.filter((e) => e.reason === 'subscription_expiry').map((e) => e.delta)).toEqual([-700]);
    expect(await balance(app, user)).toBe(1150);
    const active = await subscriptionView(app, user);
    expect(active).toMatchObject({ status: 'active', trialEndsAt: null, tokensUsedThisPeriod: 0 });
    expect(new Date(active?.nextBillingDate ?? 0).getTime()).toBeGreaterThan(trialEnd + 27 * DAY);
    await expectLedgerConsistent(app, user);

    // A second pro subscription is refused while this one runs.
    const again = await postJson(app, user, '/api/payments/create-subscription-payment', { plan: 'premium' });
    expect(again.status).toBe(409);
  });

  it('premium: paid at once, unused tokens roll over at renewal', async () => {
    app = await startYookassaApp(kind, fake);
    const user = await signedInUser(app, 'premium@example.com');
    const { created } = await subscribe(app, fake, user, 'premium');
    expect(created.body.data).toMatchObject({ amount: '1400.00' });
    expect(await subscriptionView(app, user)).toMatchObject({ status: 'active', trialEndsAt: null });
    expect(await balance(app, user)).toBe(2550);
    await spend(app, user, 500);
    const end = await periodEndOf(app, user);
    expect(await app.services.payments.renew(new Date(end.getTime() + 1000))).toMatchObject({ renewed: 1 });
    const entries = await entriesFor(app.database.db, user.id);
    expect(entries.filter((e) => e.reason === 'subscription_expiry')).toHaveLength(0);
    expect(await balance(app, user)).toBe(4550);
    expect((await subscriptionOf(app, user.id))?.periodTokens).toBe(4500);
    await expectLedgerConsistent(app, user);
  });

  it('a failed renewal makes it past_due, retries, then cancels; a retry that succeeds makes it active', async () => {
    app = await startYookassaApp(kind, fake, {
      SUBSCRIPTION_MAX_RETRIES: '2',
      SUBSCRIPTION_RETRY_INTERVAL_MS: '3600000',
    });
    const loser = await signedInUser(app, 'past-due@example.com');
    const callsBefore = fake.calls.length;
    await subscribe(app, fake, loser, 'premium');
    const end = (await periodEndOf(app, loser)).getTime();
    fake.recurring = { status: 'canceled', reason: 'insufficient_funds' };
    const renew = (at: number) => app?.services.payments.renew(new Date(at));
    expect(await renew(end + 1000)).toMatchObject({ failed: 1 });
    expect(await subscriptionView(app, loser)).toMatchObject({ status: 'past_due' });
    expect((await getJson(app, loser, '/auth/me')).body.data).toMatchObject({ subscriptionStatus: 'past_due' });
    // The retry waits for its time.
    expect(await renew(end + 2000)).toMatchObject({ failed: 0, renewed: 0 });
    expect(await renew(end + 3_700_000)).toMatchObject({ failed: 1 });
    expect(await renew(end + 7_400_000)).toMatchObject({ failed: 1 });
    expect(await subscriptionView(app, loser)).toBeNull();
    expect((await subscriptionOf(app, loser.id))?.status).toBe('cancelled');
    expect((await getJson(app, loser, '/auth/me')).body.data).toMatchObject({
      subscriptionType: 'payg',
      subscriptionStatus: 'active',
      nextBillingDate: null,
    });
    // Premium's tokens were paid for: they stay.
    expect(await balance(app, loser)).toBe(2550);
    const charges = fake.calls.slice(callsBefore).filter((c) => c.method === 'POST' && c.body?.payment_method_id);
    expect(charges).toHaveLength(3);
    expect(new Set(charges.map((c) => c.idempotenceKey)).size).toBe(3);

    const winner = await signedInUser(app, 'recovers@example.com');
    await subscribe(app, fake, winner, 'premium');
    const winnerEnd = (await periodEndOf(app, winner)).getTime();
    expect(await renew(winnerEnd + 1000)).toMatchObject({ failed: 1 });
    fake.recurring = { status: 'succeeded' };
    expect(await renew(winnerEnd + 3_700_000)).toMatchObject({ renewed: 1 });
    expect(await subscriptionView(app, winner)).toMatchObject({ status: 'active' });
    expect(await balance(app, winner)).toBe(2550 + 2500);
    await expectLedgerConsistent(app, loser);
    await expectLedgerConsistent(app, winner);
  });

  it('cancel stops renewal at the period end; the unused pro tokens expire then', async () => {
    app = await startYookassaApp(kind, fake);
    const user = await signedInUser(app, 'canceller@example.com');
    expect((await postJson(app, user, '/api/payments/cancel-subscription', {})).status).toBe(404);
    await subscribe(app, fake, user, 'pro');
    await spend(app, user, 200);
    const cancelled = await postJson(app, user, '/api/payments/cancel-subscription', {});
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.data).toMatchObject({ status: 'trial', cancelAtPeriodEnd: true, nextBillingDate: null });
    expect((cancelled.body.data as { canceledAt: string | null }).canceledAt).not.toBeNull();
    const end = (await periodEndOf(app, user)).getTime();
    const chargesBefore = fake.calls.filter((c) => c.body?.payment_method_id).length;
    expect(await app.services.payments.renew(new Date(end + 1000))).toMatchObject({ ended: 1, renewed: 0 });
    expect(fake.calls.filter((c) => c.body?.payment_method_id).length).toBe(chargesBefore);
    expect(await subscriptionView(app, user)).toBeNull();
    // 1000 trial tokens, 200 spent: 800 expire, the 50 starter tokens stay.
    expect(await balance(app, user)).toBe(50);
    await expectLedgerConsistent(app, user);
    // Subscribing again: no second trial, the first month is paid.
    const again = await subscribe(app, fake, user, 'pro');
    expect(again.created.body.data).toMatchObject({ amount: '700.00' });
    expect(await subscriptionView(app, user)).toMatchObject({ status: 'active', cancelAtPeriodEnd: false });
  });
});
