import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openFreshPostgres, requirePostgres, startTestApp, type TestApp } from '../helpers';
import {
  balance,
  expectLedgerConsistent,
  expectStorageMatchesRows,
  imagesOf,
  postJson,
  requestsOf,
  signedInUser,
} from './support';
import { entriesFor } from '../../../server/ledger/repository';

// Row locks and a real connection pool only exist on PostgreSQL; PGlite runs one query at a time.
describe('simultaneous generations on PostgreSQL', () => {
  const url = requirePostgres();
  if (!url) return;
  let app: TestApp;
  beforeAll(async () => {
    // 20 tokens: exactly 10 generations with original (2 tokens each). The per-user limit of
    // jobs at once is raised past 40: this is the balance's race (tests/server/jobs has the limit's).
    app = await startTestApp(
      { name: 'postgres', open: () => openFreshPostgres(url, 20) },
      { STARTER_TOKENS: '20', JOBS_PER_USER: '40' },
    );
  });
  afterAll(async () => {
    await app.close();
  });

  it('lets exactly 10 of 40 simultaneous requests through and keeps the ledger exact', async () => {
    const user = await signedInUser(app, 'crowd@example.com');
    expect(await balance(app, user)).toBe(20);
    const replies = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        postJson(app, user, '/api/stability/text-to-image', { prompt: `crowd ${i}`, width: 1024, height: 1024 }),
      ),
    );
    const statuses = replies.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 402)).toHaveLength(30);
    for (const reply of replies.filter((r) => r.status === 402)) {
      expect(reply.body.message).toMatch(/^Insufficient tokens\. Need 2 tokens but only have [01]$/);
    }
    expect(await balance(app, user)).toBe(0);
    const entries = await entriesFor(app.database.db, user.id);
    expect(entries.filter((e) => e.reason === 'generation_charge')).toHaveLength(10);
    expect(entries.every((e) => e.balanceAfter >= 0)).toBe(true);
    expect((await requestsOf(app, user)).map((r) => r.status)).toEqual(Array.from({ length: 10 }, () => 'COMPLETED'));
    expect(await imagesOf(app, user)).toHaveLength(10);
    await expectLedgerConsistent(app, user);
    await expectStorageMatchesRows(app);
  });
});
