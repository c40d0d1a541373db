import { and, asc, desc, eq, lt, ne } from 'drizzle-orm';
import type { Executor } from '../db/client';
import { chatRequests, conversations, messages } from '../db/schema';

export type ConversationRow = typeof conversations.$inferSelect;
export type MessageRow = typeof messages.$inferSelect;
export type ChatRequestRow = typeof chatRequests.$inferSelect;

/** The user's live conversations, most recently active first. */
export async function listConversations(db: Executor, userId: number): Promise<ConversationRow[]> {
  return db
    .select()
    .from(conversations)
    .where(and(eq(conversations.userId, userId), eq(conversations.isDeleted, false)))
    .orderBy(desc(conversations.updatedAt), desc(conversations.id));
}

export async function insertConversation(db: Executor, userId: number, title: string): Promise<ConversationRow> {
  const rows = await db.insert(conversations).values({ userId, title }).returning();
  const row = rows[0];
  if (!row) throw new Error('conversation insert returned no row');
  return row;
}

/** Only the owner's, only when not deleted: anything else reads as "not found". */
export async function findConversation(db: Executor, userId: number, id: number): Promise<ConversationRow | undefined> {
  const rows = await db
    .select()
    .from(conversations)
    .where(and(eq(conversations.id, id), eq(conversations.userId, userId), eq(conversations.isDeleted, false)));
  return rows[0];
}

export async function markConversationDeleted(db: Executor, userId: number, id: number): Promise<boolean> {
  const rows = await db
    .update(conversations)
    .set({ isDeleted: true, updatedAt: new Date() })
    .where(and(eq(conversations.id, id), eq(conversations.userId, userId), eq(conversations.isDeleted, false)))
    .returning({ id: conversations.id });
  return rows.length > 0;
}

export async function touchConversation(db: Executor, id: number, title?: string): Promise<void> {
  await db
    .update(conversations)
    .set({ updatedAt: new Date(), ...(title !== undefined ? { title } : {}) })
    .where(eq(conversations.id, id));
}

export async function listMessages(db: Executor, conversationId: number): Promise<MessageRow[]> {
  return db.select().from(messages).where(eq(messages.conversationId, conversationId)).orderBy(asc(messages.id));
}

/**
 * The newest non-empty messages, oldest first: at most `count`, enough for any context
 * budget since every message costs at least a few tokens of framing.
 */
export async function listRecentMessages(db: Executor, conversationId: number, count: number): Promise<MessageRow[]> {
  const rows = await db
    .select()
    .from(messages)
    .where(and(eq(messages.conversationId, conversationId), ne(messages.content, '')))
    .orderBy(desc(messages.id))
    .limit(count);
  return rows.reverse();
}

export async function insertMessage(
  db: Executor,
  message: Pick<MessageRow, 'conversationId' | 'role' | 'content' | 'model' | 'tokensUsed'>,
): Promise<MessageRow> {
  const rows = await db.insert(messages).values(message).returning();
  const row = rows[0];
  if (!row) throw new Error('message insert returned no row');
  return row;
}

export async function insertChatRequest(
  db: Executor,
  request: Pick<ChatRequestRow, 'userId' | 'conversationId' | 'model' | 'reserved'>,
): Promise<ChatRequestRow> {
  const rows = await db.insert(chatRequests).values(request).returning();
  const row = rows[0];
  if (!row) throw new Error('chat request insert returned no row');
  return row;
}

/**
 * Closes a PENDING request. Conditional on PENDING, so of two settlements racing (the
 * stream's end and the reconciler) exactly one wins; the loser gets undefined.
 */
export async function settleChatRequest(
  db: Executor,
  id: number,
  outcome: Pick<ChatRequestRow, 'status' | 'charged' | 'inputTokens' | 'outputTokens' | 'errorMessage'>,
): Promise<ChatRequestRow | undefined> {
  const rows = await db
    .update(chatRequests)
    .set({ ...outcome, updatedAt: new Date() })
    .where(and(eq(chatRequests.id, id), eq(chatRequests.status, 'PENDING')))
    .returning();
  return rows[0];
}

export async function findChatRequest(db: Executor, id: number): Promise<ChatRequestRow | undefined> {
  const rows = await db.select().from(chatRequests).where(eq(chatRequests.id, id));
  return rows[0];
}

export async function stalePendingRequests(db: Executor, before: Date, limit = 100): Promise<ChatRequestRow[]> {
  return db
    .select()
    .from(chatRequests)
    .where(and(eq(chatRequests.status, 'PENDING'), lt(chatRequests.createdAt, before)))
    .orderBy(asc(chatRequests.id))
    .limit(limit);
}
