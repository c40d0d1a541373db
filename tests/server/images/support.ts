import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import { eq } from 'drizzle-orm';
import { expect } from 'vitest';
import { generationRequests, images } from '../../../server/db/schema';
import { balanceOf, ledgerSum } from '../../../server/ledger/repository';
import { signInThroughIdp, step, type CookieJar, type TestApp } from '../helpers';

/** A signed-in user of a test app, with the ledger checks every scenario ends with. */
export interface TestUser {
  jar: CookieJar;
  id: number;
}

export async function signedInUser(app: TestApp, login: string): Promise<TestUser> {
  const { jar } = await signInThroughIdp(app, login);
  const me = (await (await step(jar, `${app.url}/auth/me`)).json()) as { data: { id: number } };
  return { jar, id: me.data.id };
}

export async function postJson(app: TestApp, user: TestUser | undefined, path: string, body: unknown) {
  const headers: Record<string, string> = { 'content-type': 'application/json', origin: app.url };
  if (user) headers.cookie = user.jar.header();
  const response = await fetch(`${app.url}${path}`, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const json = (await response.json()) as Record<string, unknown>;
  return { status: response.status, body: json };
}

export async function getJson(app: TestApp, user: TestUser | undefined, path: string) {
  const response = await fetch(`${app.url}${path}`, { headers: user ? { cookie: user.jar.header() } : {} });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

export async function balance(app: TestApp, user: TestUser): Promise<number> {
  return (await balanceOf(app.database.db, user.id)) ?? -1;
}

/** Spends `tokens` of the user's balance, as a generation would (one ledger charge). */
export async function spend(app: TestApp, user: { id: number }, tokens: number): Promise<void> {
  await app.services.ledger.charge(
    { userId: user.id, amount: tokens, reason: 'generation_charge', idempotencyKey: `test:${randomUUID()}` },
    () => 'insufficient',
  );
}

/** The ledger invariant: the entries sum to the balance, which is never negative. */
export async function expectLedgerConsistent(app: TestApp, user: TestUser): Promise<void> {
  const [current, sum] = await Promise.all([balance(app, user), ledgerSum(app.database.db, user.id)]);
  expect(current).toBeGreaterThanOrEqual(0);
  expect(sum).toBe(current);
}

export async function requestsOf(app: TestApp, user: TestUser) {
  return app.database.db
    .select()
    .from(generationRequests)
    .where(eq(generationRequests.userId, user.id))
    .orderBy(generationRequests.id);
}

export async function imagesOf(app: TestApp, user: TestUser) {
  return app.database.db.select().from(images).where(eq(images.userId, user.id)).orderBy(images.id);
}

/**
 * Once the thumbnails asked for are made: every stored file is an image or a thumbnail of
 * an images row, every row has its thumbnail, and no file is left over.
 */
export async function expectStorageMatchesRows(app: TestApp): Promise<void> {
  await app.services.thumbnails.drain();
  const files = await fs.readdir(app.config.imagesDir).catch(() => [] as string[]);
  const rows = await app.database.db
    .select({ fileName: images.fileName, thumbnailFileName: images.thumbnailFileName })
    .from(images);
  expect(rows.filter((r) => r.thumbnailFileName === null)).toEqual([]);
  const named = rows.flatMap((r) => [r.fileName, r.thumbnailFileName ?? '']);
  expect(files.sort()).toEqual(named.sort());
}
