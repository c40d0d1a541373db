import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import type { Database } from '../../server/db/client';
import { users } from '../../server/db/schema';
import { entriesFor, ledgerSum } from '../../server/ledger/repository';
import { LedgerService } from '../../server/ledger/service';
import { testDatabases } from './helpers';

describe.each(testDatabases())('token ledger on $name', (kind) => {
  let database: Database;
  let ledger: LedgerService;
  let userId: number;
  const insufficient = (balance: number) => `only ${balance}`;

  beforeAll(async () => {
    database = await kind.open();
    ledger = new LedgerService(database.db);
    const [row] = await database.db
      .insert(users)
      .values({ issuer: 'test', subject: 'ledger', email: 'ledger@example.com' })
      .returning();
    userId = row!.id;
  });
  afterAll(async () => {
    await database.close();
  });

  async function consistent(): Promise<number> {
    const balance = await ledger.balance(userId);
    expect(await ledgerSum(database.db, userId)).toBe(balance);
    return balance;
  }

  it('credits and charges with a ledger row each, returning the balance after', async () => {
    expect(await ledger.credit({ userId, amount: 50, reason: 'signup_bonus', idempotencyKey: 'k-credit' })).toEqual({
      balanceAfter: 50,
      applied: true,
    });
    expect(
      await ledger.charge(
        { userId, amount: 12, reason: 'generation_charge', idempotencyKey: 'k-charge' },
        insufficient,
      ),
    ).toEqual({ balanceAfter: 38, applied: true });
    expect(await consistent()).toBe(38);
    const rows = await entriesFor(database.db, userId);
    expect(rows.map((r) => [r.delta, r.balanceAfter, r.reason])).toEqual([
      [50, 50, 'signup_bonus'],
      [-12, 38, 'generation_charge'],
    ]);
  });

  it('applies a key once: a repeated charge or credit changes nothing and reports the first result', async () => {
    expect(
      await ledger.charge(
        { userId, amount: 12, reason: 'generation_charge', idempotencyKey: 'k-charge' },
        insufficient,
      ),
    ).toEqual({ balanceAfter: 38, applied: false });
    expect(await ledger.credit({ userId, amount: 50, reason: 'signup_bonus', idempotencyKey: 'k-credit' })).toEqual({
      balanceAfter: 50,
      applied: false,
    });
    expect(await consistent()).toBe(38);
    expect(await entriesFor(database.db, userId)).toHaveLength(2);
  });

  it('refuses a charge the balance cannot cover, with the balance in the message, and changes nothing', async () => {
    await expect(
      ledger.charge({ userId, amount: 39, reason: 'generation_charge', idempotencyKey: 'k-big' }, insufficient),
    ).rejects.toMatchObject({ code: 'INSUFFICIENT_TOKENS', status: 402, message: 'only 38' });
    expect(await consistent()).toBe(38);
    // Exactly the balance is fine, down to zero and never below.
    await ledger.charge({ userId, amount: 38, reason: 'generation_charge', idempotencyKey: 'k-all' }, insufficient);
    expect(await consistent()).toBe(0);
    await expect(
      ledger.charge({ userId, amount: 1, reason: 'generation_charge', idempotencyKey: 'k-one' }, insufficient),
    ).rejects.toMatchObject({ code: 'INSUFFICIENT_TOKENS' });
  });

  it('rolls back with the caller: a change inside a failed transaction leaves no trace', async () => {
    await expect(
      ledger.transaction(async (tx) => {
        await ledger.credit({ userId, amount: 5, reason: 'generation_refund', idempotencyKey: 'k-rolled' }, tx);
        throw new Error('later step failed');
      }),
    ).rejects.toThrow('later step failed');
    expect(await consistent()).toBe(0);
    const [row] = await database.db.select().from(users).where(eq(users.id, userId));
    expect(row?.tokensAmount).toBe(0);
  });

  it('rejects amounts that are not positive integers', async () => {
    for (const amount of [0, -1, 1.5, Number.NaN]) {
      await expect(
        ledger.credit({ userId, amount, reason: 'purchase', idempotencyKey: `bad-${amount}` }),
      ).rejects.toThrow(/positive integers/);
    }
  });

  it('changes nothing for a user who is not there: a charge is unauthorised, a credit not found, the balance 0', async () => {
    const nobody = userId + 1000;
    await expect(
      ledger.charge(
        { userId: nobody, amount: 1, reason: 'generation_charge', idempotencyKey: 'k-nobody' },
        insufficient,
      ),
    ).rejects.toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
    await expect(
      ledger.credit({ userId: nobody, amount: 1, reason: 'purchase', idempotencyKey: 'k-nobody-credit' }),
    ).rejects.toMatchObject({ code: 'NOT_FOUND', status: 404 });
    expect(await ledger.balance(nobody)).toBe(0);
    expect(await entriesFor(database.db, nobody)).toEqual([]);
  });
});
