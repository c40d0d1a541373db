import { assign, fromPromise, raise, setup } from 'xstate';
import { chatErrorMessages, parseConversationId } from '../domain/chat';
import {
  isPlaceholderTitle,
  titleFromMessage,
  type Conversation,
  type ConversationSummary,
  type Message,
  type ModelList,
} from '../domain/conversation';

export type ConversationRoutingEvent =
  /** The `/chat/$conversationId` value changed (undefined on /chat). */
  | { type: 'ROUTE.CHANGED'; param: string | undefined }
  | { type: 'DELETE'; id: number }
  /** chat-send created a conversation for a first message: select it and open its page. */
  | { type: 'CONVERSATION.CREATED'; conversation: Conversation }
  /** chat-send finished an exchange: the messages join the open conversation. */
  | { type: 'MESSAGES.APPENDED'; conversationId: number; messages: Message[] }
  | { type: 'CONVERSATION.CLEARED' };

export interface ConversationRoutingContext {
  models: ModelList | null;
  conversations: ConversationSummary[];
  current: Conversation | null;
  /** The latest route value, kept while the lists load. */
  routeParam: string | undefined;
  /** The conversation shown or being loaded. */
  targetId: number | null;
  deletingId: number | null;
}

const isNotFound = (error: unknown) =>
  typeof error === 'object' && error !== null && (error as { status?: unknown }).status === 404;

/** Where the route leads once the lists are in (SPEC section 2 "Chat", section 4). */
const routeDecision = (extra: Array<{ type: 'notifyError'; params: { message: string } }> = []) => [
  {
    guard: 'routeInvalid' as const,
    target: '#chatRouting.ready.conversation.none',
    actions: [...extra, 'redirectToChat' as const],
  },
  { guard: 'routeEmpty' as const, target: '#chatRouting.ready.conversation.none', actions: extra },
  { target: '#chatRouting.ready.conversation.loading', actions: [...extra, 'targetRoute' as const] },
];

/**
 * SPEC sections 2 and 4: the chat page's lists, the open conversation, deletion, and the
 * route. Loads models, then conversations, then the conversation the route names; reloads
 * whenever the route names another one; an id that is not a whole number goes back to
 * /chat with the history entry replaced.
 */
export const conversationRoutingMachine = setup({
  types: {
    context: {} as ConversationRoutingContext,
    events: {} as ConversationRoutingEvent,
  },
  actors: {
    loadModels: fromPromise<ModelList>(() => Promise.reject(new Error('loadModels not provided'))),
    loadConversations: fromPromise<ConversationSummary[]>(() =>
      Promise.reject(new Error('loadConversations not provided')),
    ),
    loadConversation: fromPromise<Conversation, { id: number }>(() =>
      Promise.reject(new Error('loadConversation not provided')),
    ),
    deleteConversation: fromPromise<void, { id: number }>(() =>
      Promise.reject(new Error('deleteConversation not provided')),
    ),
  },
  actions: {
    /** Router navigation; provided by the screen. */
    navigate: (_, _params: { to: string; replace: boolean }) => {},
    redirectToChat: () => {},
    notifyError: (_, _params: { message: string }) => {},
    /** Tells whoever holds the settings which models exist. */
    announceModels: (_, _params: { models: ModelList }) => {},
    setModels: assign((_, params: { models: ModelList }) => ({ models: params.models })),
    setConversations: assign((_, params: { conversations: ConversationSummary[] }) => ({
      conversations: params.conversations,
    })),
    setRouteParam: assign((_, params: { param: string | undefined }) => ({ routeParam: params.param })),
    targetRoute: assign(({ context }) => ({ targetId: parseConversationId(context.routeParam) ?? null })),
    clearCurrent: assign({ current: null, targetId: null }),
    setCurrent: assign((_, params: { conversation: Conversation }) => ({ current: params.conversation })),
    selectCreated: assign(({ context }, params: { conversation: Conversation }) => ({
      targetId: params.conversation.id,
      conversations: [params.conversation, ...context.conversations.filter((c) => c.id !== params.conversation.id)].map(
        ({ id, title, isDeleted, createdAt, updatedAt }) => ({ id, title, isDeleted, createdAt, updatedAt }),
      ),
    })),
    setDeleting: assign((_, params: { id: number }) => ({ deletingId: params.id })),
    removeDeleted: assign(({ context }) => ({
      conversations: context.conversations.filter((c) => c.id !== context.deletingId),
      deletingId: null,
    })),
    clearDeleting: assign({ deletingId: null }),
    appendMessages: assign(({ context }, params: { conversationId: number; messages: Message[] }) => {
      const last = params.messages.at(-1);
      const found = context.conversations.find((c) => c.id === params.conversationId);
      const firstUser = params.messages.find((m) => m.role === 'user');
      // The server names a placeholder-titled conversation after its first message; so do we.
      const retitle = (c: { title: string }) =>
        firstUser && isPlaceholderTitle(c.title) ? titleFromMessage(firstUser.content) : c.title;
      const bumped = found ? { ...found, title: retitle(found) } : undefined;
      return {
        current:
          context.current?.id === params.conversationId
            ? {
                ...context.current,
                title: retitle(context.current),
                messages: [...context.current.messages, ...params.messages],
              }
            : context.current,
        // The most recently active conversation goes to the top, as the server lists it.
        conversations: bumped
          ? [
              { ...bumped, updatedAt: last?.createdAt ?? bumped.updatedAt },
              ...context.conversations.filter((c) => c.id !== params.conversationId),
            ]
          : context.conversations,
      };
    }),
  },
  guards: {
    routeInvalid: ({ context }) =>
      context.routeParam !== undefined && parseConversationId(context.routeParam) === undefined,
    routeEmpty: ({ context }) => context.routeParam === undefined,
    paramInvalid: (_, params: { param: string | undefined }) =>
      params.param !== undefined && parseConversationId(params.param) === undefined,
    paramEmpty: (_, params: { param: string | undefined }) => params.param === undefined,
    paramIsTarget: ({ context }, params: { param: string | undefined }) =>
      parseConversationId(params.param) === context.targetId,
    isNotFound: (_, params: { error: unknown }) => isNotFound(params.error),
    deletedIsOpen: ({ context }) => context.deletingId !== null && context.deletingId === context.targetId,
  },
}).createMachine({
  id: 'chatRouting',
  context: {
    models: null,
    conversations: [],
    current: null,
    routeParam: undefined,
    targetId: null,
    deletingId: null,
  },
  initial: 'initialising',
  states: {
    initialising: {
      initial: 'loadingModels',
      on: {
        'ROUTE.CHANGED': { actions: { type: 'setRouteParam', params: ({ event }) => ({ param: event.param }) } },
      },
      states: {
        loadingModels: {
          invoke: {
            src: 'loadModels',
            onDone: {
              target: 'loadingConversations',
              actions: [
                { type: 'setModels', params: ({ event }) => ({ models: event.output }) },
                { type: 'announceModels', params: ({ event }) => ({ models: event.output }) },
              ],
            },
            onError: {
              target: 'loadingConversations',
              actions: { type: 'notifyError', params: { message: chatErrorMessages.loadModels } },
            },
          },
        },
        loadingConversations: {
          invoke: {
            src: 'loadConversations',
            onDone: routeDecision().map((t) => ({
              ...t,
              actions: [
                {
                  type: 'setConversations' as const,
                  params: ({ event }: { event: { output: ConversationSummary[] } }) => ({
                    conversations: event.output,
                  }),
                },
                ...t.actions,
              ],
            })),
            onError: routeDecision([{ type: 'notifyError', params: { message: chatErrorMessages.loadConversations } }]),
          },
        },
      },
    },
    ready: {
      type: 'parallel',
      on: {
        'MESSAGES.APPENDED': {
          actions: {
            type: 'appendMessages',
            params: ({ event }) => ({ conversationId: event.conversationId, messages: event.messages }),
          },
        },
      },
      states: {
        conversation: {
          initial: 'none',
          on: {
            'ROUTE.CHANGED': [
              {
                guard: { type: 'paramInvalid', params: ({ event }) => ({ param: event.param }) },
                target: '.none',
                actions: [
                  { type: 'setRouteParam', params: ({ event }) => ({ param: event.param }) },
                  'clearCurrent',
                  'redirectToChat',
                ],
              },
              {
                guard: { type: 'paramEmpty', params: ({ event }) => ({ param: event.param }) },
                target: '.none',
                actions: [{ type: 'setRouteParam', params: ({ event }) => ({ param: event.param }) }, 'clearCurrent'],
              },
              {
                guard: { type: 'paramIsTarget', params: ({ event }) => ({ param: event.param }) },
                actions: { type: 'setRouteParam', params: ({ event }) => ({ param: event.param }) },
              },
              {
                target: '.loading',
                reenter: true,
                actions: [{ type: 'setRouteParam', params: ({ event }) => ({ param: event.param }) }, 'targetRoute'],
              },
            ],
            'CONVERSATION.CREATED': {
              target: '.loading',
              reenter: true,
              actions: [
                { type: 'selectCreated', params: ({ event }) => ({ conversation: event.conversation }) },
                {
                  type: 'navigate',
                  params: ({ event }) => ({ to: `/chat/${event.conversation.id}`, replace: false }),
                },
              ],
            },
            'CONVERSATION.CLEARED': { target: '.none', actions: 'clearCurrent' },
          },
          states: {
            none: {},
            loading: {
              invoke: {
                src: 'loadConversation',
                input: ({ context }) => ({ id: context.targetId ?? 0 }),
                onDone: {
                  target: 'loaded',
                  actions: { type: 'setCurrent', params: ({ event }) => ({ conversation: event.output }) },
                },
                onError: [
                  {
                    guard: { type: 'isNotFound', params: ({ event }) => ({ error: event.error }) },
                    target: 'notFound',
                  },
                  {
                    target: 'notFound',
                    actions: { type: 'notifyError', params: { message: chatErrorMessages.loadConversation } },
                  },
                ],
              },
            },
            loaded: {},
            notFound: {},
          },
        },
        deletion: {
          initial: 'idle',
          states: {
            idle: {
              on: {
                DELETE: {
                  target: 'deleting',
                  actions: { type: 'setDeleting', params: ({ event }) => ({ id: event.id }) },
                },
              },
            },
            deleting: {
              invoke: {
                src: 'deleteConversation',
                input: ({ context }) => ({ id: context.deletingId ?? 0 }),
                onDone: [
                  {
                    guard: 'deletedIsOpen',
                    target: 'idle',
                    actions: [
                      'removeDeleted',
                      { type: 'navigate', params: { to: '/chat', replace: false } },
                      raise({ type: 'CONVERSATION.CLEARED' }),
                    ],
                  },
                  { target: 'idle', actions: 'removeDeleted' },
                ],
                onError: {
                  target: 'idle',
                  actions: [
                    'clearDeleting',
                    { type: 'notifyError', params: { message: chatErrorMessages.deleteConversation } },
                  ],
                },
              },
            },
          },
        },
      },
    },
  },
});
