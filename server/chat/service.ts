// Just over 400 lines on purpose: one reply's whole paid life (reserve, stream, settle,
// release) in one place, so the ledger's invariants can be read in one file.
import {
  CHAT_MAX_TOKENS_DEFAULT,
  chatCost,
  CONTEXT_TOKENS_LIMIT_DEFAULT,
  worstCaseCost,
  type ChatStreamRequest,
  type ReplyEnding,
} from '../../src/domain/chat';
import { insufficientTokensMessage } from '../../src/domain/errors';
import {
  NEW_CONVERSATION_TITLE,
  titleFromMessage,
  type Conversation,
  type CreateConversationRequest,
  type ConversationSummary,
  type Message,
  type ModelList,
} from '../../src/domain/conversation';
import type { ChatBilling, ChatContextInfo } from '../../src/domain/sse';
import type { ConfiguredChatModel } from '../config';
import type { Db } from '../db/client';
import { AppError } from '../errors';
import {
  countMessageTokens,
  countTokens,
  MIN_TOKENS_PER_MESSAGE,
  promptTokensBound,
  trimHistory,
} from '../providers/chat/tokens';
import {
  ChatProviderError,
  isChatProviderError,
  type ChatEngine,
  type ChatFinishReason,
  type ChatMessageIn,
} from '../providers/chat/types';
import { modelListOf } from './models';
import { keepAlive, LIVENESS } from '../background/liveness';
import { Stoppable } from '../background/stops';
import type { EventLog } from '../events/service';
import { STREAM_EVENTS, type ReplyEvent } from '../../src/domain/jobs';
import { countTokensCharged, countTokensRefunded } from '../metrics';
import * as repo from './repository';

/** A reply paid for in advance: what the engine gets and what settlement needs. */
export interface ChatTurn {
  requestId: number;
  userId: number;
  conversationId: number;
  model: ConfiguredChatModel;
  messages: ChatMessageIn[];
  /** The reply limit actually used: the request's, lowered to what the balance covers. */
  maxTokens: number;
  reserved: number;
  contextInfo: ChatContextInfo;
  /** The user's message as stored with the reservation. */
  userMessageId: number;
}

export interface ChatTurnResult {
  content: string;
  /** Set when the engine failed; `content` then holds what arrived before. */
  failure?: ChatProviderError;
  aborted: boolean;
  /** Why the reply is not an ordinary complete answer (a refusal, cut off, filtered). */
  ending: ReplyEnding | null;
  billing: ChatBilling;
  tokensUsed: number;
  balanceAfter: number;
  assistantMessage?: Message;
}

const CONVERSATION_NOT_FOUND = 'Conversation not found';

export function toMessageDto(row: repo.MessageRow): Message {
  return {
    id: row.id,
    role: row.role,
    content: row.content,
    model: row.model,
    tokensUsed: row.tokensUsed,
    ...(row.ending !== null ? { ending: row.ending } : {}),
    createdAt: row.createdAt.toISOString(),
  };
}

export function toConversationDto(row: repo.ConversationRow): ConversationSummary {
  return {
    id: row.id,
    title: row.title,
    isDeleted: row.isDeleted,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/**
 * The largest reply the balance can pay for, at most `requested` tokens, and its cost.
 * Throws 402 when not even a one-token reply is covered.
 */
export function affordableReply(
  promptTokens: number,
  requested: number,
  model: ConfiguredChatModel,
  balance: number,
): { maxTokens: number; cost: number } {
  const full = worstCaseCost(promptTokens, requested, model);
  if (full <= balance) return { maxTokens: requested, cost: full };
  const smallest = worstCaseCost(promptTokens, 1, model);
  if (smallest > balance) {
    throw new AppError('INSUFFICIENT_TOKENS', insufficientTokensMessage(smallest, balance), {
      details: { balance, cost: smallest },
    });
  }
  // Solve cost(prompt, m) <= balance for m, then step down past float rounding.
  const inputCost = (promptTokens * model.inputCostPer1M) / 1e6;
  let m = Math.min(requested, Math.floor(((balance - inputCost) * 1e6) / model.outputCostPer1M));
  while (m > 1 && worstCaseCost(promptTokens, m, model) > balance) m -= 1;
  m = Math.max(1, m);
  return { maxTokens: m, cost: worstCaseCost(promptTokens, m, model) };
}

/** A reply's text so far is stored and told to the user's other tabs at most this often. */
const PROGRESS_EVERY_MS = 250;

export class ChatService {
  private readonly modelList: ModelList;
  /** Replies this instance streams, by request id, with the means to stop each. */
  private readonly running: Stoppable<{ controller: AbortController }>;

  constructor(
    private readonly db: Db,
    private readonly engine: ChatEngine,
    private readonly models: readonly ConfiguredChatModel[],
    /** Where replies in progress are told (other tabs, a reload); none in unit setups. */
    private readonly events?: EventLog,
  ) {
    this.modelList = modelListOf(models);
    // Stop pressed in a tab served by another instance.
    this.running = new Stoppable(events?.bus, 'stop-reply');
    events?.bus.subscribe('jobs', (message) => this.running.receive(message));
  }

  /**
   * Stop, from any tab: ends the user's reply in progress in the conversation on the
   * instance that streams it (at once through the bus, else at its next heartbeat). The
   * reply is stored and billed for what was produced. False when none was in progress.
   */
  async stopReply(userId: number, conversationId: number): Promise<boolean> {
    if (!(await repo.findConversation(this.db, userId, conversationId))) {
      throw new AppError('NOT_FOUND', CONVERSATION_NOT_FOUND);
    }
    const requestId = await repo.requestStop(this.db, userId, conversationId);
    if (requestId === undefined) return false;
    await this.running.stop(requestId).catch(() => undefined);
    return true;
  }

  listModels(): ModelList {
    return this.modelList;
  }

  async listConversations(userId: number): Promise<ConversationSummary[]> {
    return (await repo.listConversations(this.db, userId)).map(toConversationDto);
  }

  /**
   * A new conversation. Made for a first message, it is refused (402, nothing created)
   * when the balance cannot pay for even the smallest reply to that message: no empty
   * conversation is left behind by a user who cannot chat.
   */
  async createConversation(userId: number, request: CreateConversationRequest = {}): Promise<Conversation> {
    if (request.message !== undefined && request.model !== undefined) {
      const model = this.modelOf(request.model);
      const newMessage: ChatMessageIn = { role: 'user', content: request.message };
      const { messages } = trimHistory([], newMessage, request.contextTokensLimit ?? CONTEXT_TOKENS_LIMIT_DEFAULT);
      const { balance } = await repo.readTurnContext(this.db, userId, undefined, 0);
      affordableReply(countMessageTokens(messages), request.maxTokens ?? CHAT_MAX_TOKENS_DEFAULT, model, balance ?? 0);
    }
    const row = await repo.insertConversation(this.db, userId, request.title?.trim() || NEW_CONVERSATION_TITLE);
    return { ...toConversationDto(row), messages: [] };
  }

  async getConversation(userId: number, id: number): Promise<Conversation> {
    const row = await repo.findConversation(this.db, userId, id);
    if (!row) throw new AppError('NOT_FOUND', CONVERSATION_NOT_FOUND);
    const [messages, pending] = await Promise.all([repo.listMessages(this.db, id), repo.pendingReply(this.db, id)]);
    return {
      ...toConversationDto(row),
      messages: messages.map(toMessageDto),
      ...(pending
        ? {
            pendingReply: {
              requestId: pending.id,
              model: pending.model,
              content: pending.partialContent ?? '',
              startedAt: pending.createdAt.toISOString(),
            },
          }
        : {}),
    };
  }

  async deleteConversation(userId: number, id: number): Promise<void> {
    if (!(await repo.markConversationDeleted(this.db, userId, id))) {
      throw new AppError('NOT_FOUND', CONVERSATION_NOT_FOUND);
    }
  }

  private modelOf(id: string): ConfiguredChatModel {
    const model = this.models.find((m) => m.id === id);
    if (!model) throw new AppError('UNKNOWN_MODEL', `Unknown model: ${id}`);
    return model;
  }

  /**
   * Validates, trims the history and reserves the worst case; nothing is stored when it
   * throws. `conversationId` undefined starts a new conversation named after the message.
   *
   * When `balanceHint` (the balance as the session lookup saw it) covers the full reply
   * at the largest prompt the context limit allows, one atomic statement checks the
   * conversation, reserves that bound, stores the message and returns the history, and
   * settlement later charges the exact cost. Otherwise, or if the balance moved, the
   * history is read first and the reservation is the exact worst case, lowered to what
   * the balance covers.
   */
  async begin(
    userId: number,
    conversationId: number | undefined,
    body: ChatStreamRequest,
    balanceHint?: number,
  ): Promise<ChatTurn> {
    const model = this.modelOf(body.model);
    const newMessage: ChatMessageIn = { role: 'user', content: body.message };
    // Only as many of the newest messages as the context budget could ever hold: a long
    // conversation must not make every reply slower.
    const historyLimit = Math.ceil(body.contextTokensLimit / MIN_TOKENS_PER_MESSAGE) + 1;
    const reservation = {
      userId,
      conversation: conversationId === undefined ? { new: true as const } : { id: conversationId },
      title: titleFromMessage(body.message),
      model: model.id,
      message: body.message,
    };
    const turnOf = (
      reserved: { requestId: number; conversationId: number; userMessageId: number },
      history: ChatMessageIn[],
      maxTokens: number,
      cost: number,
    ): ChatTurn => {
      const { messages, contextInfo } = trimHistory(history, newMessage, body.contextTokensLimit);
      return {
        requestId: reserved.requestId,
        userMessageId: reserved.userMessageId,
        userId,
        conversationId: reserved.conversationId,
        model,
        messages,
        maxTokens,
        reserved: cost,
        contextInfo,
      };
    };

    const boundCost = worstCaseCost(promptTokensBound(newMessage, body.contextTokensLimit), body.maxTokens, model);
    if (balanceHint !== undefined && boundCost <= balanceHint) {
      const outcome = await repo.reserveTurn(this.db, { ...reservation, cost: boundCost, historyLimit });
      if (outcome.kind === 'not_found') throw new AppError('NOT_FOUND', CONVERSATION_NOT_FOUND);
      if (outcome.kind === 'reserved') {
        countTokensCharged('chat_reserve', boundCost);
        return turnOf(outcome, outcome.history, body.maxTokens, boundCost);
      }
    }

    const context = await repo.readTurnContext(this.db, userId, conversationId, historyLimit);
    if (conversationId !== undefined && !context.conversation) {
      throw new AppError('NOT_FOUND', CONVERSATION_NOT_FOUND);
    }
    const { messages } = trimHistory(context.history, newMessage, body.contextTokensLimit);
    // The read takes no lock; the conditional charge below is what really decides.
    const { maxTokens, cost } = affordableReply(
      countMessageTokens(messages),
      body.maxTokens,
      model,
      context.balance ?? 0,
    );
    const outcome = await repo.reserveTurn(this.db, { ...reservation, cost });
    if (outcome.kind === 'not_found') throw new AppError('NOT_FOUND', CONVERSATION_NOT_FOUND);
    if (outcome.kind === 'refused') {
      throw new AppError('INSUFFICIENT_TOKENS', insufficientTokensMessage(cost, outcome.balance), {
        details: { balance: outcome.balance, cost },
      });
    }
    countTokensCharged('chat_reserve', cost);
    return turnOf(outcome, context.history, maxTokens, cost);
  }

  /**
   * Streams the reply through `onDelta` and settles the reservation: the actual cost is
   * kept and the rest released. A failure before any text, or a stop before any text,
   * costs nothing; a partial reply costs what was produced. `onReplyEnd` runs when the
   * engine has finished, before the settlement's statement.
   *
   * The reply outlives its page (issue #28): `clientGone` stops it only before its first
   * word; after that it goes on to its end, its text so far stored and told to the user's
   * other tabs, and only Stop (`stopReply`, from any tab) ends it early.
   */
  async run(
    turn: ChatTurn,
    clientGone: AbortSignal,
    onDelta: (content: string) => void | Promise<void>,
    onReplyEnd: () => void | Promise<void> = () => undefined,
  ): Promise<ChatTurnResult> {
    const stop = new AbortController();
    this.running.add(turn.requestId, { controller: stop });
    let content = '';
    const onGone = () => {
      if (content === '') stop.abort();
    };
    clientGone.addEventListener('abort', onGone, { once: true });
    if (clientGone.aborted) stop.abort();
    try {
      const result = await this.stream(
        turn,
        stop.signal,
        (delta) => {
          content += delta;
          return onDelta(delta);
        },
        onReplyEnd,
      );
      await this.tell(turn, result.content, true, result);
      return result;
    } finally {
      clientGone.removeEventListener('abort', onGone);
      this.running.delete(turn.requestId);
    }
  }

  /** The reply so far (or its end) as an event for the user's other tabs; a failure to tell is not the reply's. */
  private async tell(turn: ChatTurn, content: string, done: boolean, result?: ChatTurnResult): Promise<void> {
    if (!this.events) return;
    try {
      await this.events.append(turn.userId, STREAM_EVENTS.reply, {
        conversationId: turn.conversationId,
        requestId: turn.requestId,
        model: turn.model.id,
        content,
        done,
        ...(result?.assistantMessage ? { message: result.assistantMessage } : {}),
        ...(result ? { balance: result.balanceAfter } : {}),
      } satisfies ReplyEvent);
    } catch {
      // The stream's reader finds the stored message on its next load.
    }
  }

  private async stream(
    turn: ChatTurn,
    signal: AbortSignal,
    onDelta: (content: string) => void | Promise<void>,
    onReplyEnd: () => void | Promise<void>,
  ): Promise<ChatTurnResult> {
    let content = '';
    let usage: { promptTokens: number; completionTokens: number } | undefined;
    let failure: ChatProviderError | undefined;
    let refused = false;
    let finishReason: ChatFinishReason | undefined;
    // The client may have gone while the reply was being reserved: then the model is
    // never called and the whole reservation goes back.
    if (signal.aborted) {
      return this.settle(turn, {
        content,
        inputTokens: countMessageTokens(turn.messages),
        outputTokens: 0,
        aborted: true,
        ending: null,
      });
    }
    // A long reply shows it is alive, on a timer (not per chunk: no extra statement on the
    // hot path); a Stop asked for on an instance the bus did not reach is seen there.
    const stopBeating = keepAlive(
      async () => {
        const beat = await repo.beatRequest(this.db, turn.requestId);
        if (beat?.stopRequested) await this.running.stop(turn.requestId);
      },
      () => undefined,
    );
    // The text so far, stored and told at most every PROGRESS_EVERY_MS (one write at a time).
    let toldAt = 0;
    let telling: Promise<void> | undefined;
    const progress = () => {
      const now = Date.now();
      if (telling || now - toldAt < PROGRESS_EVERY_MS) return;
      toldAt = now;
      const text = content;
      telling = repo
        .saveProgress(this.db, turn.requestId, text)
        .then(() => this.tell(turn, text, false))
        .catch(() => undefined)
        .finally(() => {
          telling = undefined;
        });
    };
    try {
      for await (const chunk of this.engine.stream({
        model: turn.model.id,
        messages: turn.messages,
        maxTokens: turn.maxTokens,
        maxTokensParam: turn.model.maxTokensParam,
        signal,
      })) {
        if (chunk.type === 'delta' || chunk.type === 'refusal') {
          // A refusal is the reply the user reads: relayed and stored like text, marked below.
          if (chunk.type === 'refusal') refused = true;
          content += chunk.content;
          await onDelta(chunk.content);
          progress();
        } else {
          usage = { promptTokens: chunk.promptTokens, completionTokens: chunk.completionTokens };
          finishReason = chunk.finishReason;
        }
      }
    } catch (error) {
      failure = isChatProviderError(error)
        ? error
        : new ChatProviderError('upstream', 'The language model service failed while answering.', { cause: error });
    } finally {
      stopBeating();
    }
    await telling;
    await onReplyEnd();
    const inputTokens = usage?.promptTokens ?? countMessageTokens(turn.messages);
    const outputTokens = usage?.completionTokens ?? countTokens(content);
    // A reply that failed or was stopped is not said to have ended for the model's reasons.
    const ending: ReplyEnding | null =
      failure !== undefined || signal.aborted ? null : refused ? 'refusal' : (finishReason ?? null);
    return this.settle(turn, { content, inputTokens, outputTokens, failure, aborted: signal.aborted, ending });
  }

  private async settle(
    turn: ChatTurn,
    outcome: {
      content: string;
      inputTokens: number;
      outputTokens: number;
      failure?: ChatProviderError;
      aborted: boolean;
      ending: ReplyEnding | null;
    },
  ): Promise<ChatTurnResult> {
    const { content, inputTokens, outputTokens, failure, aborted, ending } = outcome;
    const producedNothing = content === '' && (failure !== undefined || aborted);
    const actual = producedNothing ? 0 : chatCost({ inputTokens, outputTokens, ...turn.model });
    // Never more than reserved: the reservation is the promise made to the balance. Other
    // tokenizers may count a little differently from ours.
    const charged = Math.min(actual, turn.reserved);
    const tokensUsed = inputTokens + outputTokens;

    const settled = await repo.settleTurn(this.db, {
      requestId: turn.requestId,
      userId: turn.userId,
      conversationId: turn.conversationId,
      outcome: {
        status: failure ? 'FAILED' : 'COMPLETED',
        charged,
        inputTokens,
        outputTokens,
        errorMessage: failure ? failure.message : aborted ? 'stopped by the client' : null,
      },
      release: turn.reserved - charged,
      // A filtered reply may have no text; it is still an answer, with its note.
      reply: content !== '' || ending !== null ? { content, model: turn.model.id, tokensUsed, ending } : undefined,
      // A reply that failed before any text leaves nothing behind, the user's message
      // included: the browser offers it again (Retry) and it is not stored twice.
      dropUserMessageId: failure !== undefined && content === '' ? turn.userMessageId : undefined,
    });
    if (settled.kind === 'settled') countTokensRefunded('chat_release', turn.reserved - charged);
    const message = settled.kind === 'settled' ? settled.message : undefined;
    return {
      content,
      failure,
      aborted,
      ending,
      billing: { inputTokens, outputTokens, cost: settled.kind === 'settled' ? charged : 0 },
      tokensUsed,
      balanceAfter: settled.balanceAfter,
      assistantMessage: message && {
        id: message.id,
        role: 'assistant',
        content,
        model: turn.model.id,
        tokensUsed,
        ...(ending !== null ? { ending } : {}),
        createdAt: message.createdAt.toISOString(),
      },
    };
  }

  /**
   * Crash recovery: a reservation still PENDING whose heartbeat stopped belongs to a
   * process that died. Its tokens go back; nothing is charged. Live streams, on any
   * instance, keep beating and are left alone.
   */
  async releaseStale(staleAfterMs: number = LIVENESS.staleAfterMs): Promise<number> {
    let released = 0;
    for (const request of await repo.stalePendingRequests(this.db, staleAfterMs)) {
      const settled = await repo.settleTurn(this.db, {
        requestId: request.id,
        userId: request.userId,
        conversationId: null,
        outcome: {
          status: 'FAILED',
          charged: 0,
          inputTokens: null,
          outputTokens: null,
          errorMessage: 'reservation released after the stream was lost',
        },
        release: request.reserved,
        onlyIfStaleMs: staleAfterMs,
      });
      if (settled.kind === 'settled') {
        released += 1;
        countTokensRefunded('chat_release', request.reserved);
      }
    }
    return released;
  }
}
