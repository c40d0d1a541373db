import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../server/db/client';
import { entriesFor } from '../../../server/ledger/repository';
import { createFreshPostgres, requirePostgres, type TestApp, type TestDatabaseKind } from '../helpers';
import { balance, expectLedgerConsistent, postJson, signedInUser, type TestUser } from '../images/support';
import { FakeYookassa } from '../providers/payments/fake-yookassa';
import { buyTokens, providerIdOf, returnFrom, startYookassaApp, subscriptionOf, webhook } from './support';

// Row locks and a real connection pool only exist on PostgreSQL; PGlite runs one query at a time.
describe('payments under concurrency on PostgreSQL', { timeout: 240_000 }, () => {
  const url = requirePostgres();
  if (!url) return;
  let fake: FakeYookassa;
  let database: Awaited<ReturnType<typeof createFreshPostgres>>;
  let first: TestApp;
  let second: TestApp;

  beforeAll(async () => {
    fake = await new FakeYookassa().start();
    database = await createFreshPostgres(url);
    // Two app instances on one database, as behind a load balancer.
    const kind: TestDatabaseKind = {
      name: 'postgres',
      open: () => openDatabase({ kind: 'postgres', url: database.url, poolSize: 20 }),
    };
    first = await startYookassaApp(kind, fake);
    second = await startYookassaApp(kind, fake);
  });
  afterAll(async () => {
    await first.close();
    await second.close();
    await fake.stop();
    await database.drop();
  });

  it('50 webhook deliveries and 50 returns at once, to both instances, credit exactly once', async () => {
    const user = await signedInUser(first, 'rush@example.com');
    const { paymentId, providerId } = await buyTokens(first, user, 1000);
    fake.decide(providerId, { status: 'succeeded' });
    const apps = [first, second];
    const results = await Promise.all([
      ...Array.from({ length: 50 }, (_, i) => webhook(apps[i % 2] as TestApp, fake.notification(providerId))),
      ...Array.from({ length: 50 }, (_, i) =>
        returnFrom(apps[i % 2] as TestApp, user, paymentId).then((r) => (r.location?.includes('success') ? 200 : 0)),
      ),
      first.services.payments.reconcile(new Date(Date.now() + 3_600_000)).then(() => 200),
    ]);
    expect(results.every((status) => status === 200)).toBe(true);
    expect(await balance(first, user)).toBe(1050);
    const purchases = (await entriesFor(first.database.db, user.id)).filter((e) => e.reason === 'purchase');
    expect(purchases).toHaveLength(1);
    await expectLedgerConsistent(first, user);
  });

  it('the renewal job run by two instances at once charges each due subscription once', async () => {
    const users: TestUser[] = [];
    for (const name of ['r1', 'r2', 'r3', 'r4']) {
      const user = await signedInUser(first, `${name}@example.com`);
      const created = await postJson(first, user, '/api/payments/create-subscription-payment', { plan: 'premium' });
      const providerId = await providerIdOf(first, (created.body.data as { paymentId: string }).paymentId);
      fake.decide(providerId, { status: 'succeeded' });
      expect(await webhook(second, fake.notification(providerId))).toBe(200);
      users.push(user);
    }
    const ends = await Promise.all(
      users.map(async (u) => (await subscriptionOf(first, u.id))?.periodEnd?.getTime() ?? 0),
    );
    const due = new Date(Math.max(...ends) + 1000);
    const before = fake.calls.length;
    const runs = await Promise.all([
      first.services.payments.renew(due),
      second.services.payments.renew(due),
      first.services.payments.renew(due),
      second.services.payments.renew(due),
    ]);
    expect(runs.reduce((sum, r) => sum + r.renewed, 0)).toBe(4);
    const charges = fake.calls.slice(before).filter((c) => c.method === 'POST' && c.body?.payment_method_id);
    expect(new Set(charges.map((c) => c.idempotenceKey)).size).toBe(4);
    for (const user of users) {
      const grants = (await entriesFor(first.database.db, user.id)).filter((e) => e.reason === 'subscription_grant');
      expect(grants).toHaveLength(2);
      expect(await balance(first, user)).toBe(50 + 2500 + 2500);
      expect((await subscriptionOf(first, user.id))?.period).toBe(2);
      await expectLedgerConsistent(first, user);
    }
  });

  // Issue #25 item 11: "Four tabs (or four double clicks) gave 4,000 tokens for 0 RUB."
  it('eight pro subscribe clicks at once, on both instances, open one card check and grant one trial', async () => {
    const user = await signedInUser(first, 'many-tabs@example.com');
    const apps = [first, second];
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        postJson(apps[i % 2] as TestApp, user, '/api/payments/create-subscription-payment', { plan: 'pro' }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array.from({ length: 8 }, () => 200));
    // The customer pays every check YooKassa holds for them; each notification goes to both instances.
    const checks = [...fake.payments.values()].filter((p) => p.metadata.userId === String(user.id));
    await Promise.all(
      checks.map(async (check) => {
        fake.decide(check.id, { status: 'succeeded' });
        await Promise.all([webhook(first, fake.notification(check.id)), webhook(second, fake.notification(check.id))]);
      }),
    );
    expect(await balance(first, user)).toBe(1050);
    const credits = (await entriesFor(first.database.db, user.id)).filter((e) => e.reason !== 'signup_bonus');
    expect(credits.map((e) => e.delta)).toEqual([1000]);
    expect((await subscriptionOf(first, user.id))?.status).toBe('trial');
    // One check was opened, and every tab was given it.
    expect(checks).toHaveLength(1);
    expect(new Set(answers.map((a) => (a.body.data as { paymentId: string }).paymentId)).size).toBe(1);
    // Whichever tab's create reached YooKassa, it asked to save the card the renewals charge.
    const creates = fake.calls.filter(
      (c) =>
        c.method === 'POST' &&
        c.path === '/payments' &&
        (c.body?.metadata as Record<string, string> | undefined)?.userId === String(user.id),
    );
    expect(creates.length).toBeGreaterThanOrEqual(1);
    for (const create of creates) expect(create.body).toMatchObject({ save_payment_method: true });
    await expectLedgerConsistent(first, user);
  });
});
