// Just over 400 lines on purpose: one chart for the chat screen's address, lists and open
// conversation, whose regions answer the same route events and read as one diagram.
import { assign, enqueueActions, fromPromise, raise, setup, type ActorRefFrom, type SnapshotFrom } from 'xstate';
import { chatProblem, parseConversationId } from '../domain/chat';
import { problemOf, type Problem } from '../domain/errors';
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
  /** chat-send finished an exchange, or chat-reply saw a reply end: the messages join the open conversation. */
  | { type: 'MESSAGES.APPENDED'; conversationId: number; messages: Message[] }
  /** chat-reply read the open conversation again (a reply written elsewhere): it replaces what is shown. */
  | { type: 'CONVERSATION.UPDATED'; conversation: Conversation }
  | { type: 'CONVERSATION.CLEARED' }
  /** The list of conversations failed to load: try again. */
  | { type: 'CONVERSATIONS.RETRY' }
  /** The open conversation failed to load (not a missing one): try again. */
  | { type: 'CONVERSATION.RETRY' }
  /** The model list failed to load: try again. */
  | { type: 'MODELS.RETRY' }
  /** Raised as the page gets ready when the first load of a list failed: shown, with Retry. */
  | { type: 'CONVERSATIONS.FAILED' }
  | { type: 'MODELS.FAILED' };

export interface ConversationRoutingContext {
  models: ModelList | null;
  conversations: ConversationSummary[];
  current: Conversation | null;
  /** The latest route value, kept while the lists load. */
  routeParam: string | undefined;
  /** The conversation shown or being loaded. */
  targetId: number | null;
  deletingId: number | null;
  /** Why a list failed to load, shown with Retry until it loads. */
  failures: { models: Problem | null; conversations: Problem | null };
}

const isNotFound = (error: unknown) =>
  typeof error === 'object' && error !== null && (error as { status?: unknown }).status === 404;

type ListName = 'models' | 'conversations';

/**
 * A list failed to load: why is kept (shown with Retry once the page is ready) and told.
 * Typed here, as the two below: inside setup() its own action map would take part in
 * inferring its type.
 */
const listFailed = enqueueActions<
  ConversationRoutingContext,
  ConversationRoutingEvent,
  { list: ListName; error: unknown },
  ConversationRoutingEvent,
  never,
  { type: 'notifyError'; params: { problem: Problem } },
  never,
  never,
  never
>(({ context, enqueue }, { list, error }) => {
  const problem = problemOf(error, chatProblem(list === 'models' ? 'loadModels' : 'loadConversations'));
  enqueue.assign({ failures: { ...context.failures, [list]: problem } });
  enqueue({ type: 'notifyError', params: { problem } });
});

/**
 * Once the page is ready: a list whose first load failed shows so, with Retry, and the
 * route remembered while the lists loaded is followed, as any later route is.
 */
const whenReady = enqueueActions<
  ConversationRoutingContext,
  ConversationRoutingEvent,
  undefined,
  ConversationRoutingEvent,
  never,
  never,
  never,
  never,
  never
>(({ context, enqueue }) => {
  if (context.failures.models) enqueue.raise({ type: 'MODELS.FAILED' });
  if (context.failures.conversations) enqueue.raise({ type: 'CONVERSATIONS.FAILED' });
  enqueue.raise({ type: 'ROUTE.CHANGED', param: context.routeParam });
});

/**
 * SPEC sections 2 and 4: the chat page's lists, the open conversation, deletion, and the
 * route. Loads models, then conversations, then the conversation the route names; reloads
 * whenever the route names another one; an id that is not a whole number goes back to
 * /chat with the history entry replaced.
 */
export const conversationRoutingMachine = setup({
  // Stryker disable all: type declarations only, erased when the code runs
  types: {
    context: {} as ConversationRoutingContext,
    events: {} as ConversationRoutingEvent,
  },
  // Stryker restore all
  // Stryker disable all: placeholders; the app and every test provide these actors
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
  // Stryker restore all
  actions: {
    /** Router navigation to a conversation's page, or to /chat (null); provided by the screen. */
    navigate: (_, _params: { conversationId: number | null; replace: boolean }) => {},
    redirectToChat: () => {},
    notifyError: (_, _params: { problem: Problem }) => {},
    listFailed,
    whenReady,
    clearFailure: assign(({ context }, params: { list: ListName }) => ({
      failures: { ...context.failures, [params.list]: null },
    })),
    setModels: assign((_, params: { models: ModelList }) => ({ models: params.models })),
    setConversations: assign((_, params: { conversations: ConversationSummary[] }) => ({
      conversations: params.conversations,
    })),
    setRouteParam: assign((_, params: { param: string | undefined }) => ({ routeParam: params.param })),
    targetRoute: assign(({ context }) => ({ targetId: parseConversationId(context.routeParam) ?? null })),
    clearCurrent: assign({ current: null, targetId: null }),
    setCurrent: assign((_, params: { conversation: Conversation }) => ({ current: params.conversation })),
    /** The open conversation as read again; another one's reading is too late and is dropped. */
    updateCurrent: assign(({ context }, params: { conversation: Conversation }) => ({
      current: context.current?.id === params.conversation.id ? params.conversation : context.current,
    })),
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
      // A stored message already shown (read again with the conversation) is not shown twice.
      const known = new Set(
        context.current?.id === params.conversationId ? context.current.messages.map((m) => m.id) : [],
      );
      const messages = params.messages.filter((m) => !known.has(m.id));
      const last = messages.at(-1);
      const found = context.conversations.find((c) => c.id === params.conversationId);
      const firstUser = messages.find((m) => m.role === 'user');
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
                messages: [...context.current.messages, ...messages],
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
    failures: { models: null, conversations: null },
  },
  initial: 'initialising',
  states: {
    // The lists load first; the route is only remembered meanwhile, and followed once ready.
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
              actions: { type: 'setModels', params: ({ event }) => ({ models: event.output }) },
            },
            onError: {
              target: 'loadingConversations',
              actions: { type: 'listFailed', params: ({ event }) => ({ list: 'models', error: event.error }) },
            },
          },
        },
        loadingConversations: {
          invoke: {
            src: 'loadConversations',
            onDone: {
              target: '#chatRouting.ready',
              actions: { type: 'setConversations', params: ({ event }) => ({ conversations: event.output }) },
            },
            onError: {
              target: '#chatRouting.ready',
              actions: { type: 'listFailed', params: ({ event }) => ({ list: 'conversations', error: event.error }) },
            },
          },
        },
      },
    },
    ready: {
      type: 'parallel',
      entry: 'whenReady',
      on: {
        'MESSAGES.APPENDED': {
          actions: {
            type: 'appendMessages',
            params: ({ event }) => ({ conversationId: event.conversationId, messages: event.messages }),
          },
        },
        'CONVERSATION.UPDATED': {
          actions: { type: 'updateCurrent', params: ({ event }) => ({ conversation: event.conversation }) },
        },
      },
      states: {
        conversation: {
          initial: 'none',
          // Where the route leads (SPEC section 2 "Chat", section 4). Declared on the region,
          // not on `ready`, so that only this region changes: a deletion under way or a failed
          // list is left as it is. Its descendants are left and entered again, so going to
          // `loading` from `loading` starts the new load in place of the old one.
          on: {
            'ROUTE.CHANGED': [
              {
                guard: { type: 'paramIsTarget', params: ({ event }) => ({ param: event.param }) },
                actions: { type: 'setRouteParam', params: ({ event }) => ({ param: event.param }) },
              },
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
                target: '.loading',
                actions: [{ type: 'setRouteParam', params: ({ event }) => ({ param: event.param }) }, 'targetRoute'],
              },
            ],
            'CONVERSATION.CREATED': {
              target: '.loading',
              actions: [
                { type: 'selectCreated', params: ({ event }) => ({ conversation: event.conversation }) },
                {
                  type: 'navigate',
                  params: ({ event }) => ({ conversationId: event.conversation.id, replace: false }),
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
                    target: 'failed',
                    actions: { type: 'notifyError', params: { problem: chatProblem('loadConversation') } },
                  },
                ],
              },
            },
            loaded: {},
            notFound: {},
            /** It exists, as far as we know, but could not be read (a server or network error). */
            failed: {
              on: { 'CONVERSATION.RETRY': 'loading' },
            },
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
                      { type: 'navigate', params: { conversationId: null, replace: false } },
                      raise({ type: 'CONVERSATION.CLEARED' }),
                    ],
                  },
                  { target: 'idle', actions: 'removeDeleted' },
                ],
                onError: {
                  target: 'idle',
                  actions: [
                    'clearDeleting',
                    {
                      type: 'notifyError',
                      params: ({ event }) => ({ problem: problemOf(event.error, chatProblem('deleteConversation')) }),
                    },
                  ],
                },
              },
            },
          },
        },
        // SPEC 8's "Failed to load conversations" stays on screen with Retry, instead of
        // an empty list that would read as "no conversations yet".
        conversationList: {
          initial: 'loaded',
          states: {
            loaded: { on: { 'CONVERSATIONS.FAILED': 'failed' } },
            failed: { on: { 'CONVERSATIONS.RETRY': 'loading' } },
            loading: {
              invoke: {
                src: 'loadConversations',
                onDone: {
                  target: 'loaded',
                  actions: [
                    { type: 'setConversations', params: ({ event }) => ({ conversations: event.output }) },
                    { type: 'clearFailure', params: { list: 'conversations' } },
                  ],
                },
                onError: {
                  target: 'failed',
                  actions: {
                    type: 'listFailed',
                    params: ({ event }) => ({ list: 'conversations', error: event.error }),
                  },
                },
              },
            },
          },
        },
        // Without models nothing can be sent: the failure stays on screen with Retry.
        modelList: {
          initial: 'loaded',
          states: {
            loaded: { on: { 'MODELS.FAILED': 'failed' } },
            failed: { on: { 'MODELS.RETRY': 'loading' } },
            loading: {
              invoke: {
                src: 'loadModels',
                onDone: {
                  target: 'loaded',
                  actions: [
                    { type: 'setModels', params: ({ event }) => ({ models: event.output }) },
                    { type: 'clearFailure', params: { list: 'models' } },
                  ],
                },
                onError: {
                  target: 'failed',
                  actions: { type: 'listFailed', params: ({ event }) => ({ list: 'models', error: event.error }) },
                },
              },
            },
          },
        },
      },
    },
  },
});

export type ConversationRoutingRef = ActorRefFrom<typeof conversationRoutingMachine>;
export type ConversationRoutingSnapshot = SnapshotFrom<typeof conversationRoutingMachine>;
