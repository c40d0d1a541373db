import { assign, enqueueActions, fromCallback, fromPromise, setup, type AnyActorRef } from 'xstate';
import { CHAT_MAX_TOKENS_DEFAULT, chatErrorMessages } from '../domain/chat';
import { NEW_CONVERSATION_TITLE, type Conversation, type Message } from '../domain/conversation';

export interface ChatStreamInput {
  conversationId: number;
  message: string;
  model: string;
  maxTokens: number;
  contextTokensLimit: number;
}

/** What the stream actor (src/api) sends back while a reply arrives. */
export type ChatStreamEvent =
  | { type: 'STREAM.CHUNK'; content: string }
  | { type: 'STREAM.COMPLETE'; tokensUsed: number; balanceAfter: number; messageId?: number }
  | { type: 'STREAM.ERROR'; message: string; balanceAfter?: number };

export type ChatSendEvent =
  | { type: 'DRAFT.CHANGE'; text: string }
  | {
      type: 'SEND';
      model: string | null;
      contextTokensLimit: number;
      /** The open conversation, or null on /chat (a new one is created). */
      conversationId: number | null;
      /** The input is disabled (a conversation loading): nothing is sent. */
      disabled: boolean;
      sentAt: string;
    }
  | { type: 'STOP' }
  | { type: 'CONVERSATION.READY' }
  | { type: 'CONVERSATION.FAILED' }
  | ChatStreamEvent;

interface Exchange {
  user: Message;
  assistant: Message;
}

export interface ChatSendContext {
  session: AnyActorRef | null;
  routing: AnyActorRef | null;
  draft: string;
  pending: Exchange | null;
  conversationId: number | null;
  model: string | null;
  contextTokensLimit: number;
  /** Local messages get negative ids until the page reloads them from the server. */
  nextLocalId: number;
}

/** Reads just enough of the routing actor's snapshot to know the new conversation is open. */
interface RoutingView {
  matches(state: object): boolean;
  context: { current: { id: number } | null; targetId: number | null };
}

/**
 * Waits until the routing actor shows the conversation: pure, it only watches an actor.
 */
const conversationReady = fromCallback<ChatSendEvent, { routing: AnyActorRef | null; conversationId: number }>(
  ({ input, sendBack }) => {
    if (!input.routing) {
      sendBack({ type: 'CONVERSATION.FAILED' });
      return () => {};
    }
    let done = false;
    const check = (snapshot: RoutingView) => {
      if (done) return;
      if (snapshot.context.targetId !== input.conversationId) return;
      if (
        snapshot.matches({ ready: { conversation: 'loaded' } }) &&
        snapshot.context.current?.id === input.conversationId
      ) {
        done = true;
        sendBack({ type: 'CONVERSATION.READY' });
      } else if (snapshot.matches({ ready: { conversation: 'notFound' } })) {
        done = true;
        sendBack({ type: 'CONVERSATION.FAILED' });
      }
    };
    const subscription = input.routing.subscribe((snapshot) => check(snapshot as RoutingView));
    check(input.routing.getSnapshot() as RoutingView);
    return () => subscription.unsubscribe();
  },
);

/**
 * SPEC section 4 "Chat send": ignored while a stream runs; ensures a conversation (the
 * first message creates one, which the routing actor selects, opens and loads); shows the
 * user's message and an empty assistant message that the stream fills; on completion the
 * balance updates; on error the placeholder goes and the error is shown.
 */
export const chatSendMachine = setup({
  types: {
    context: {} as ChatSendContext,
    events: {} as ChatSendEvent,
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- xstate takes the input type from it
    input: {} as { session?: AnyActorRef | null; routing?: AnyActorRef | null },
  },
  actors: {
    createConversation: fromPromise<Conversation, { title: string }>(() =>
      Promise.reject(new Error('createConversation not provided')),
    ),
    conversationReady,
    chatStream: fromCallback<ChatSendEvent, ChatStreamInput>(({ sendBack }) => {
      sendBack({ type: 'STREAM.ERROR', message: chatErrorMessages.sendMessage });
    }),
    /** A short wait after Stop so the server has settled the bill before the balance is re-read. */
    settleDelay: fromPromise<void>(() => Promise.resolve()),
  },
  actions: {
    notifyError: (_, _params: { message: string }) => {},
    setDraft: assign((_, params: { text: string }) => ({ draft: params.text })),
    startExchange: assign(
      (
        { context },
        params: { model: string; contextTokensLimit: number; conversationId: number | null; sentAt: string },
      ) => ({
        draft: '',
        conversationId: params.conversationId,
        model: params.model,
        contextTokensLimit: params.contextTokensLimit,
        nextLocalId: context.nextLocalId - 2,
        pending: {
          user: {
            id: context.nextLocalId,
            role: 'user' as const,
            content: context.draft.trim(),
            model: null,
            tokensUsed: null,
            createdAt: params.sentAt,
          },
          assistant: {
            id: context.nextLocalId - 1,
            role: 'assistant' as const,
            content: '',
            model: params.model,
            tokensUsed: null,
            createdAt: params.sentAt,
          },
        },
      }),
    ),
    setConversation: assign((_, params: { id: number }) => ({ conversationId: params.id })),
    appendChunk: assign(({ context }, params: { content: string }) => ({
      pending: context.pending
        ? {
            ...context.pending,
            assistant: { ...context.pending.assistant, content: context.pending.assistant.content + params.content },
          }
        : null,
    })),
    finishExchange: assign(({ context }, params: { tokensUsed: number; messageId?: number }) => ({
      pending: context.pending
        ? {
            ...context.pending,
            assistant: {
              ...context.pending.assistant,
              tokensUsed: params.tokensUsed,
              id: params.messageId ?? context.pending.assistant.id,
            },
          }
        : null,
    })),
    /** On error the empty-or-partial assistant message goes; the user's message stays. */
    dropAssistant: assign(({ context }) => ({
      pending: context.pending
        ? { ...context.pending, assistant: { ...context.pending.assistant, content: '' } }
        : null,
    })),
    clearPending: assign({ pending: null }),
    handOver: enqueueActions(({ context, enqueue }) => {
      if (!context.routing || !context.pending || context.conversationId === null) return;
      const { user, assistant } = context.pending;
      enqueue.sendTo(context.routing, {
        type: 'MESSAGES.APPENDED',
        conversationId: context.conversationId,
        messages: assistant.content !== '' ? [user, assistant] : [user],
      });
    }),
    announceCreated: enqueueActions(({ context, enqueue }, params: { conversation: Conversation }) => {
      if (context.routing)
        enqueue.sendTo(context.routing, { type: 'CONVERSATION.CREATED', conversation: params.conversation });
    }),
    reportBalance: enqueueActions(({ context, enqueue }, params: { balance: number }) => {
      if (context.session) enqueue.sendTo(context.session, { type: 'BALANCE.CHANGED', balance: params.balance });
    }),
    refreshBalance: enqueueActions(({ context, enqueue }) => {
      if (context.session) enqueue.sendTo(context.session, { type: 'USER.REFRESH' });
    }),
  },
  guards: {
    blank: ({ context }) => context.draft.trim() === '',
    disabled: (_, params: { disabled: boolean }) => params.disabled,
    noModel: (_, params: { model: string | null }) => params.model === null || params.model === '',
    hasConversation: (_, params: { conversationId: number | null }) => params.conversationId !== null,
    hasBalance: (_, params: { balance?: number }) => params.balance !== undefined,
  },
}).createMachine({
  id: 'chatSend',
  context: ({ input }) => ({
    session: input.session ?? null,
    routing: input.routing ?? null,
    draft: '',
    pending: null,
    conversationId: null,
    model: null,
    contextTokensLimit: 0,
    nextLocalId: -1,
  }),
  initial: 'idle',
  states: {
    idle: {
      on: {
        // The input is disabled while a reply is on its way (SPEC 2), so drafts change only here.
        'DRAFT.CHANGE': { actions: { type: 'setDraft', params: ({ event }) => ({ text: event.text }) } },
        SEND: [
          { guard: 'blank' },
          { guard: { type: 'disabled', params: ({ event }) => ({ disabled: event.disabled }) } },
          {
            guard: { type: 'noModel', params: ({ event }) => ({ model: event.model }) },
            actions: { type: 'notifyError', params: { message: chatErrorMessages.noModelSelected } },
          },
          {
            guard: { type: 'hasConversation', params: ({ event }) => ({ conversationId: event.conversationId }) },
            target: 'streaming',
            actions: {
              type: 'startExchange',
              params: ({ event }) => ({
                model: event.model ?? '',
                contextTokensLimit: event.contextTokensLimit,
                conversationId: event.conversationId,
                sentAt: event.sentAt,
              }),
            },
          },
          {
            target: 'creating',
            actions: {
              type: 'startExchange',
              params: ({ event }) => ({
                model: event.model ?? '',
                contextTokensLimit: event.contextTokensLimit,
                conversationId: null,
                sentAt: event.sentAt,
              }),
            },
          },
        ],
      },
    },
    creating: {
      invoke: {
        src: 'createConversation',
        input: () => ({ title: NEW_CONVERSATION_TITLE }),
        onDone: {
          target: 'waitingForConversation',
          actions: [
            { type: 'setConversation', params: ({ event }) => ({ id: event.output.id }) },
            { type: 'announceCreated', params: ({ event }) => ({ conversation: event.output }) },
          ],
        },
        onError: {
          target: 'idle',
          actions: ['clearPending', { type: 'notifyError', params: { message: chatErrorMessages.createConversation } }],
        },
      },
    },
    waitingForConversation: {
      invoke: {
        src: 'conversationReady',
        input: ({ context }) => ({ routing: context.routing, conversationId: context.conversationId ?? 0 }),
      },
      on: {
        'CONVERSATION.READY': 'streaming',
        'CONVERSATION.FAILED': {
          target: 'idle',
          actions: [
            'clearPending',
            { type: 'notifyError', params: { message: chatErrorMessages.createOrLoadConversation } },
          ],
        },
      },
    },
    streaming: {
      invoke: {
        src: 'chatStream',
        input: ({ context }) => ({
          conversationId: context.conversationId ?? 0,
          message: context.pending?.user.content ?? '',
          model: context.model ?? '',
          maxTokens: CHAT_MAX_TOKENS_DEFAULT,
          contextTokensLimit: context.contextTokensLimit,
        }),
      },
      on: {
        'STREAM.CHUNK': { actions: { type: 'appendChunk', params: ({ event }) => ({ content: event.content }) } },
        'STREAM.COMPLETE': {
          target: 'idle',
          actions: [
            {
              type: 'finishExchange',
              params: ({ event }) => ({ tokensUsed: event.tokensUsed, messageId: event.messageId }),
            },
            'handOver',
            'clearPending',
            { type: 'reportBalance', params: ({ event }) => ({ balance: event.balanceAfter }) },
          ],
        },
        'STREAM.ERROR': [
          {
            guard: { type: 'hasBalance', params: ({ event }) => ({ balance: event.balanceAfter }) },
            target: 'idle',
            actions: [
              'dropAssistant',
              'handOver',
              'clearPending',
              { type: 'reportBalance', params: ({ event }) => ({ balance: event.balanceAfter ?? 0 }) },
              { type: 'notifyError', params: ({ event }) => ({ message: event.message }) },
            ],
          },
          {
            target: 'idle',
            actions: [
              'dropAssistant',
              'handOver',
              'clearPending',
              { type: 'notifyError', params: ({ event }) => ({ message: event.message }) },
            ],
          },
        ],
        // Leaving the state stops the stream actor, which aborts the request; the server
        // keeps the partial reply and bills what was produced.
        STOP: { target: 'stopping', actions: ['handOver', 'clearPending'] },
      },
    },
    stopping: {
      invoke: {
        src: 'settleDelay',
        onDone: { target: 'idle', actions: 'refreshBalance' },
        onError: { target: 'idle', actions: 'refreshBalance' },
      },
    },
  },
});
