import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, testDatabases, type TestApp } from '../helpers';
import {
  balance,
  expectLedgerConsistent,
  expectStorageMatchesRows,
  imagesOf,
  requestsOf,
  signedInUser,
} from '../images/support';
import { facePhoto, postPortrait } from './support';

describe.each(testDatabases())('simultaneous portraits on $name', (kind) => {
  let app: TestApp;
  beforeAll(async () => {
    // 36 tokens: exactly three portraits.
    app = await startTestApp(kind, { STARTER_TOKENS: '36' });
  });
  afterAll(async () => {
    await app.close();
  });

  it('10 at once from a user who can afford 3: exactly 3 are made and paid, 7 refused with nothing written', async () => {
    const user = await signedInUser(app, `race-${kind.name}@example.com`);
    const photo = await facePhoto();
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        postPortrait(app, user, { fields: { prompt: `Portrait ${i}` }, files: [{ bytes: photo, name: `${i}.jpg` }] }),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 200, 402, 402, 402, 402, 402, 402, 402]);
    for (const refused of results.filter((r) => r.status === 402)) {
      expect(refused.body.message).toBe('Insufficient tokens. You need 12 tokens for portrait generation.');
    }
    expect(await balance(app, user)).toBe(0);
    expect((await requestsOf(app, user)).map((r) => r.status)).toEqual(['COMPLETED', 'COMPLETED', 'COMPLETED']);
    expect((await imagesOf(app, user)).length).toBe(3);
    await expectLedgerConsistent(app, user);
    await expectStorageMatchesRows(app);
  });
});
