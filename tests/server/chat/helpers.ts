import { eq, sql } from 'drizzle-orm';
import { expect } from 'vitest';
import { chatRequests, conversations, messages, tokenLedger, users } from '../../../server/db/schema';
import { createChatStreamReader, type ChatStreamItem } from '../../../src/domain/sse';
import { signInThroughIdp, step, type CookieJar, type TestApp } from '../helpers';

export interface Person {
  jar: CookieJar;
  id: number;
}

export async function signInPerson(app: TestApp, login: string, topUp = 0): Promise<Person> {
  const { jar } = await signInThroughIdp(app, login);
  const me = (await (await step(jar, `${app.url}/auth/me`)).json()) as { data: { id: number } };
  if (topUp > 0) {
    await app.services.ledger.credit({
      userId: me.data.id,
      amount: topUp,
      reason: 'purchase',
      idempotencyKey: `test-topup:${login}:${topUp}`,
    });
  }
  return { jar, id: me.data.id };
}

export function post(app: TestApp, person: Person, path: string, body: unknown, init: RequestInit = {}) {
  return step(person.jar, `${app.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: app.url },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...init,
  });
}

export async function newConversation(app: TestApp, person: Person, title = 'Test'): Promise<number> {
  const response = await post(app, person, '/llm/conversations', { title });
  expect(response.status).toBe(201);
  return ((await response.json()) as { data: { id: number } }).data.id;
}

export interface StreamResult {
  status: number;
  contentType: string | null;
  raw: string;
  bytes: Uint8Array;
  events: ChatStreamItem[];
  data: Array<Record<string, unknown>>;
}

export async function stream(
  app: TestApp,
  person: Person,
  conversationId: number | string,
  body: Record<string, unknown>,
): Promise<StreamResult> {
  const response = await post(app, person, `/llm/conversations/${conversationId}/stream`, body);
  const bytes = new Uint8Array(await response.arrayBuffer());
  const raw = new TextDecoder().decode(bytes);
  const parser = createChatStreamReader();
  const events = [...parser.push(bytes), ...parser.end()];
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    raw,
    bytes,
    events,
    data: events.flatMap((e) => (e.type === 'data' ? [e.value as Record<string, unknown>] : [])),
  };
}

export async function balanceOf(app: TestApp, userId: number): Promise<number> {
  const rows = await app.database.db.select().from(users).where(eq(users.id, userId));
  return rows[0]?.tokensAmount ?? -1;
}

/** The ledger invariant: the entries sum to the balance. */
export async function expectLedgerConsistent(app: TestApp, userId: number): Promise<void> {
  const rows = await app.database.db
    .select({ total: sql<string>`coalesce(sum(${tokenLedger.delta}), 0)` })
    .from(tokenLedger)
    .where(eq(tokenLedger.userId, userId));
  expect(Number(rows[0]?.total)).toBe(await balanceOf(app, userId));
}

export async function countsFor(app: TestApp, userId: number) {
  const db = app.database.db;
  const [conv] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(conversations)
    .where(eq(conversations.userId, userId));
  const [msg] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(messages)
    .innerJoin(conversations, eq(messages.conversationId, conversations.id))
    .where(eq(conversations.userId, userId));
  const [req] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(chatRequests)
    .where(eq(chatRequests.userId, userId));
  const [led] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(tokenLedger)
    .where(eq(tokenLedger.userId, userId));
  return {
    conversations: conv?.n,
    messages: msg?.n,
    requests: req?.n,
    ledger: led?.n,
    balance: await balanceOf(app, userId),
  };
}

export async function lastRequestOf(app: TestApp, userId: number) {
  const rows = await app.database.db
    .select()
    .from(chatRequests)
    .where(eq(chatRequests.userId, userId))
    .orderBy(sql`${chatRequests.id} desc`)
    .limit(1);
  return rows[0];
}

export async function until<T>(probe: () => Promise<T | undefined>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export interface Money {
  /** GET /auth/me's tokensAmount. */
  balance: number;
  /** GET /api/ledger's entries, newest first. */
  entries: Array<{ id: number; delta: number; balanceAfter: number }>;
}

/** The balance and the ledger as the user's own API shows them. */
export async function moneyOf(app: TestApp, person: Person): Promise<Money> {
  const me = (await (await step(person.jar, `${app.url}/auth/me`)).json()) as { data: { tokensAmount: number } };
  const ledger = (await (await step(person.jar, `${app.url}/api/ledger?limit=100`)).json()) as {
    data: { entries: Money['entries'] };
  };
  return { balance: me.data.tokensAmount, entries: ledger.data.entries };
}

/** What changed between two readings: the balance moved by `delta`, the new rows sum to it and end at the balance. */
export function moneyMoved(before: Money, after: Money): { delta: number; rows: Money['entries'] } {
  const known = new Set(before.entries.map((e) => e.id));
  const rows = after.entries.filter((e) => !known.has(e.id));
  const delta = after.balance - before.balance;
  expect(rows.reduce((sum, e) => sum + e.delta, 0)).toBe(delta);
  if (rows.length > 0) expect(rows[0]!.balanceAfter).toBe(after.balance);
  return { delta, rows };
}
