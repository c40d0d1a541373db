import { fromCallback, fromPromise } from 'xstate';
import { chatErrorMessages } from '../domain/chat';
import {
  conversationListSchema,
  conversationSchema,
  modelListSchema,
  type Conversation,
  type ConversationSummary,
  type ModelList,
} from '../domain/conversation';
import { messageForStatus } from '../domain/errors';
import { createSseLineParser, toChatStreamEvent } from '../domain/sse';
import { chatSendMachine, type ChatSendEvent, type ChatStreamInput } from '../machines/chat-send';
import { chatSettingsMachine } from '../machines/chat-settings';
import { conversationRoutingMachine } from '../machines/conversation-routing';
import { API_BASE, authHeaders, request } from './client';
import { z } from 'zod';

export const MODEL_STORAGE_KEY = 'chatModel';

export const fetchModels = (): Promise<ModelList> => request((w) => w.get('/llm/models').json(), modelListSchema);
export const fetchConversations = (): Promise<ConversationSummary[]> =>
  request((w) => w.get('/llm/conversations').json(), conversationListSchema);
export const fetchConversation = (id: number): Promise<Conversation> =>
  request((w) => w.get(`/llm/conversations/${id}`).json(), conversationSchema);
export const createConversation = (title: string): Promise<Conversation> =>
  request((w) => w.post({ title }, '/llm/conversations').json(), conversationSchema);
export const deleteConversation = async (id: number): Promise<void> => {
  await request((w) => w.delete(`/llm/conversations/${id}`).json(), z.unknown());
};

export function storedModel(): string | null {
  try {
    return globalThis.localStorage?.getItem(MODEL_STORAGE_KEY) ?? null;
  } catch {
    return null;
  }
}

async function messageOf(response: Response): Promise<string> {
  try {
    const body = (await response.json()) as { message?: unknown };
    if (typeof body.message === 'string' && body.message) return body.message;
  } catch {
    // no JSON body: fall back to the status text
  }
  return response.statusText || messageForStatus(response.status);
}

/**
 * Reads our SSE chat stream (SPEC section 7) with fetch + ReadableStream: `data:` lines
 * of JSON, `[DONE]` ends it, unparsable lines are ignored. Stopping the actor aborts the
 * request, which the server treats as Stop.
 */
export async function readChatStream(
  input: ChatStreamInput,
  signal: AbortSignal,
  sendBack: (event: ChatSendEvent) => void,
): Promise<void> {
  let finished = false;
  const fail = (message: string, balanceAfter?: number) => {
    if (finished) return;
    finished = true;
    sendBack({ type: 'STREAM.ERROR', message, ...(balanceAfter !== undefined ? { balanceAfter } : {}) });
  };
  try {
    const response = await fetch(`${API_BASE}/llm/conversations/${input.conversationId}/stream`, {
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
    if (!response.ok) return fail(await messageOf(response));
    const reader = response.body?.getReader();
    if (!reader) return fail(chatErrorMessages.noResponseBody);
    const parser = createSseLineParser();
    const handle = (events: ReturnType<typeof parser.push>): boolean => {
      for (const event of events) {
        if (event.type === 'done') return true;
        const data = toChatStreamEvent(event.value);
        if (!data) continue;
        if (data.error !== undefined) {
          fail(data.message || chatErrorMessages.streamErrorFallback, data.balanceAfter);
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
          });
        }
      }
      return false;
    };
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        handle(parser.end());
        break;
      }
      if (handle(parser.push(value))) {
        await reader.cancel().catch(() => undefined);
        break;
      }
    }
    if (!finished) fail(chatErrorMessages.streamErrorFallback);
  } catch (error) {
    if (signal.aborted) return;
    console.warn('[chat] stream failed', error);
    fail(chatErrorMessages.sendMessage);
  }
}

export const chatStreamActor = fromCallback<ChatSendEvent, ChatStreamInput>(({ input, sendBack }) => {
  const controller = new AbortController();
  void readChatStream(input, controller.signal, sendBack);
  return () => controller.abort();
});

/** The chat machines wired to the real API; the screen adds navigation and toasts. */
export const liveChatSendMachine = chatSendMachine.provide({
  actors: {
    createConversation: fromPromise<Conversation, { title: string }>(({ input }) => createConversation(input.title)),
    chatStream: chatStreamActor,
    settleDelay: fromPromise<void>(() => new Promise((resolve) => setTimeout(resolve, 600))),
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
