import { fromCallback, fromPromise } from 'xstate';
import {
  chatStreamEndpoint,
  conversationEndpoint,
  conversationListEndpoint,
  createConversationEndpoint,
  deleteConversationEndpoint,
  modelListEndpoint,
  stopReplyEndpoint,
} from '../domain/api/chat';
import { pathOf, type DataOf } from '../domain/api/contract';
import { chatProblem, streamFailureCode } from '../domain/chat';
import type { Conversation, ConversationSummary, ModelList } from '../domain/conversation';
import { codeForStatus, messageForStatus, UNCODED, type Problem } from '../domain/errors';
import { createChatStreamReader, toChatStreamEvent, type ChatStreamItem } from '../domain/sse';
import {
  chatSendMachine,
  type ChatSendEvent,
  type ChatStreamInput,
  type CreateConversationInput,
} from '../machines/chat-send';
import { chatReplyMachine } from '../machines/chat-reply';
import { chatSettingsMachine } from '../machines/chat-settings';
import { conversationRoutingMachine } from '../machines/conversation-routing';
import { chatMachine } from '../machines/chat';
import { API_BASE, authHeaders, call, callUnread } from './client';
import { keepDraft, sessionUserId } from './drafts';

export const MODEL_STORAGE_KEY = 'chatModel';

export const fetchModels = (): Promise<ModelList> => call(modelListEndpoint, {});
export const fetchConversations = (): Promise<ConversationSummary[]> => call(conversationListEndpoint, {});
export const fetchConversation = (id: number, signal?: AbortSignal): Promise<Conversation> =>
  call(conversationEndpoint, { params: { id }, ...(signal ? { signal } : {}) });
/**
 * Creates a conversation for a first message. The message, model and limits let the server
 * refuse (402) one that the balance cannot pay any reply for, before anything is stored.
 */
export const createConversation = (input: CreateConversationInput): Promise<Conversation> =>
  call(createConversationEndpoint, { body: input });
/**
 * SPEC section 7: the deletion's reply is not read. Any success means deleted, even one whose
 * body is not the `{ success, message }` our server sends.
 */
export const deleteConversation = (id: number): Promise<void> =>
  callUnread(deleteConversationEndpoint, { params: { id } });

/**
 * Stop from any tab (issue #28 item 5): ends the reply in progress in the conversation
 * wherever it is written; `stopped` false when none was in progress.
 */
export const stopReply = (conversationId: number, signal?: AbortSignal): Promise<DataOf<typeof stopReplyEndpoint>> =>
  call(stopReplyEndpoint, { params: { id: conversationId }, ...(signal ? { signal } : {}) });

/**
 * A request its actor gave up (the state left, React's development remount) never settles:
 * its rejection would otherwise reach the actor started again in its place.
 */
async function unlessStopped<T>(signal: AbortSignal, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
  try {
    return await call(signal);
  } catch (error) {
    if (signal.aborted) return new Promise<never>(() => {});
    throw error;
  }
}

export function storedModel(): string | null {
  try {
    return globalThis.localStorage?.getItem(MODEL_STORAGE_KEY) ?? null;
  } catch {
    return null;
  }
}

/**
 * SPEC 8: a stream HTTP error is the server's code and values (a 402 says the balance and
 * the cost), else its message, else the HTTP status text.
 */
async function problemOfResponse(response: Response): Promise<Problem> {
  try {
    const body = (await response.json()) as { code?: unknown; message?: unknown; details?: unknown };
    const message = typeof body.message === 'string' && body.message ? body.message : undefined;
    if (typeof body.code === 'string' && body.code) {
      const details = body.details;
      return {
        code: body.code,
        message: message ?? messageForStatus(response.status),
        ...(details !== null && typeof details === 'object' ? { details: details as Record<string, unknown> } : {}),
      };
    }
    if (message) return { code: UNCODED, message };
  } catch {
    // no JSON body: fall back to the status text
  }
  if (response.statusText) return { code: UNCODED, message: response.statusText };
  return { code: codeForStatus(response.status), message: messageForStatus(response.status) };
}

/**
 * Reads our SSE chat stream (SPEC section 7) with fetch + ReadableStream, its frames split
 * by eventsource-parser (createChatStreamReader): `data:` lines of JSON, `[DONE]` ends it,
 * unparsable lines are ignored. `[DONE]` after no last frame is a
 * reply stopped on the server (Stop from any tab, issue #28); a connection that breaks, or a
 * body that ends without `[DONE]`, is lost (the server goes on with a reply that had begun).
 * Stopping the actor aborts the request, which ends the reply only before its first words.
 */
export async function readChatStream(
  input: ChatStreamInput,
  signal: AbortSignal,
  sendBack: (event: ChatSendEvent) => void,
): Promise<void> {
  let finished = false;
  const fail = (problem: Problem, balanceAfter?: number) => {
    if (finished) return;
    finished = true;
    sendBack({ type: 'STREAM.ERROR', problem, ...(balanceAfter !== undefined ? { balanceAfter } : {}) });
  };
  const lose = (problem: Problem) => {
    if (finished) return;
    finished = true;
    sendBack({ type: 'STREAM.LOST', problem });
  };
  try {
    const response = await fetch(`${API_BASE}${pathOf(chatStreamEndpoint, { id: input.conversationId })}`, {
      method: 'POST',
      credentials: 'include',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...authHeaders() },
      body: JSON.stringify({
        message: input.message,
        model: input.model,
        maxTokens: input.maxTokens,
        contextTokensLimit: input.contextTokensLimit,
      }),
      signal,
    });
    if (!response.ok) return fail(await problemOfResponse(response));
    const reader = response.body?.getReader();
    if (!reader) return fail(chatProblem('noResponseBody'));
    const frames = createChatStreamReader();
    const handle = (events: ChatStreamItem[]): boolean => {
      for (const event of events) {
        if (event.type === 'done') {
          if (!finished) {
            finished = true;
            sendBack({ type: 'STREAM.ENDED' });
          }
          return true;
        }
        const data = toChatStreamEvent(event.value);
        if (!data) continue;
        if (data.error !== undefined) {
          // The stream names the kind of failure; SPEC's fallback when it says nothing.
          fail(
            data.error
              ? {
                  code: streamFailureCode(data.error),
                  message: data.message || chatProblem('streamErrorFallback').message,
                }
              : chatProblem('streamErrorFallback'),
            data.balanceAfter,
          );
          return true;
        }
        if (data.content) sendBack({ type: 'STREAM.CHUNK', content: data.content });
        if (data.isComplete && !finished) {
          finished = true;
          sendBack({
            type: 'STREAM.COMPLETE',
            tokensUsed: data.tokensUsed ?? 0,
            balanceAfter: data.balanceAfter ?? 0,
            ...(data.messageId !== undefined ? { messageId: data.messageId } : {}),
            ...(data.ending !== undefined ? { ending: data.ending } : {}),
          });
        }
      }
      return false;
    };
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        handle(frames.end());
        break;
      }
      if (handle(frames.push(value))) {
        await reader.cancel().catch(() => undefined);
        break;
      }
    }
    if (!finished) lose(chatProblem('streamErrorFallback'));
  } catch (error) {
    if (signal.aborted) return;
    console.warn('[chat] stream failed', error);
    lose(chatProblem('sendMessage'));
  }
}

export const chatStreamActor = fromCallback<ChatSendEvent, ChatStreamInput>(({ input, sendBack }) => {
  const controller = new AbortController();
  void readChatStream(input, controller.signal, sendBack);
  return () => controller.abort();
});

/** Stop, from chat-send (this tab's reply) and chat-reply (a reply written elsewhere). */
const stopReplyActor = fromPromise<{ stopped: boolean }, { conversationId: number }>(({ input, signal }) =>
  unlessStopped(signal, (s) => stopReply(input.conversationId, s)),
);

/** The chat machines wired to the real API; the screen adds navigation and toasts. */
export const liveChatSendMachine = chatSendMachine.provide({
  actions: {
    keepDraft: ({ context }, params) => keepDraft('chat', sessionUserId(context.session), params.text),
  },
  actors: {
    createConversation: fromPromise<Conversation, CreateConversationInput>(({ input }) => createConversation(input)),
    chatStream: chatStreamActor,
    stopReply: stopReplyActor,
  },
});

/** The reply written elsewhere (a reload, another tab), wired to the API; the screen adds toasts. */
export const liveChatReplyMachine = chatReplyMachine.provide({
  actors: {
    loadConversation: fromPromise<Conversation, { id: number }>(({ input, signal }) =>
      unlessStopped(signal, (s) => fetchConversation(input.id, s)),
    ),
    stopReply: stopReplyActor,
  },
  actions: {
    logFailure: (_, params) => {
      console.warn(`[chat] ${params.what} failed`, params.error);
    },
  },
});

export const liveConversationRoutingMachine = conversationRoutingMachine.provide({
  actors: {
    loadModels: fromPromise<ModelList>(() => fetchModels()),
    loadConversations: fromPromise<ConversationSummary[]>(() => fetchConversations()),
    loadConversation: fromPromise<Conversation, { id: number }>(({ input }) => fetchConversation(input.id)),
    deleteConversation: fromPromise<void, { id: number }>(({ input }) => deleteConversation(input.id)),
  },
});

export const liveChatSettingsMachine = chatSettingsMachine.provide({
  actions: {
    persistModel: (_, params) => {
      try {
        globalThis.localStorage?.setItem(MODEL_STORAGE_KEY, params.model);
      } catch (error) {
        console.warn('[chat] could not remember the model', error);
      }
    },
  },
});

/** What the screen adds to the chat page's charts: the router's navigation and the notifications. */
export interface ChatScreenEffects {
  /** To a conversation's page, or to /chat (null). */
  navigate(conversationId: number | null, replace: boolean): void;
  /** A failure said as a notification (SPEC 8). */
  notifyError(problem: Problem): void;
  /** The remembered model is gone: which one is used instead (issue #26). */
  announceFallback(fallback: { gone: string; id: string; name: string }): void;
}

/** The chat page's chart, its four parts wired to the API and to the screen's effects. */
export function liveChatMachine(effects: ChatScreenEffects) {
  const notifyError = (_: unknown, params: { problem: Problem }) => effects.notifyError(params.problem);
  return chatMachine.provide({
    actors: {
      routing: liveConversationRoutingMachine.provide({
        actions: {
          navigate: (_, params) => effects.navigate(params.conversationId, params.replace),
          redirectToChat: () => effects.navigate(null, true),
          notifyError,
        },
      }),
      settings: liveChatSettingsMachine.provide({
        actions: { announceFallback: (_, params) => effects.announceFallback(params) },
      }),
      reply: liveChatReplyMachine.provide({ actions: { notifyError } }),
      send: liveChatSendMachine.provide({ actions: { notifyError } }),
    },
  });
}
