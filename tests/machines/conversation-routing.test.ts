import { expect } from 'vitest';
import type { AnyMachineSnapshot } from 'xstate';
import type { Conversation, ModelList } from '../../src/domain/conversation';
import type { Problem } from '../../src/domain/errors';
import { conversationRoutingMachine, type ConversationRoutingContext } from '../../src/machines/conversation-routing';
import { describeModel, doneOf, errorOf } from './harness';

const models: ModelList = {
  models: {
    'gpt-4o': {
      id: 'gpt-4o',
      name: 'GPT-4o',
      description: '',
      maxTokens: 128000,
      inputCostPer1M: 350,
      outputCostPer1M: 1400,
      isStreamingAllowed: true,
    },
  },
  default: 'gpt-4o',
};
const conversation = (id: number): Conversation => ({
  id,
  title: `Chat ${id}`,
  isDeleted: false,
  createdAt: '2026-11-20T10:00:00.000Z',
  updatedAt: '2026-11-20T10:00:00.000Z',
  messages: [],
});
const list = [conversation(5), conversation(7)].map(({ messages: _m, ...c }) => c);

const navigations: Array<{ to: string; replace: boolean }> = [];
const redirects: number[] = [];
const errors: Problem[] = [];

const project = (c: ConversationRoutingContext) => ({
  routeParam: c.routeParam ?? null,
  targetId: c.targetId,
  deletingId: c.deletingId,
  currentId: c.current?.id ?? null,
  failures: { models: c.failures.models?.code ?? null, conversations: c.failures.conversations?.code ?? null },
});

describeModel('conversation-routing', {
  machine: conversationRoutingMachine,
  // The page's events while the lists rest (loaded), the lists' events while the page
  // rests (nothing open, nothing deleting): every transition is still taken, and the
  // traversal does not multiply the two regions' states.
  events: (snapshot: AnyMachineSnapshot) => {
    const context = snapshot.context as ConversationRoutingContext;
    const starting = snapshot.matches('initialising');
    const listsRest =
      starting ||
      (snapshot.matches({ ready: { conversationList: 'loaded' } }) &&
        snapshot.matches({ ready: { modelList: 'loaded' } }));
    const pageRests =
      starting ||
      (snapshot.matches({ ready: { conversation: 'none' } }) && snapshot.matches({ ready: { deletion: 'idle' } }));
    return [
      ...(listsRest
        ? [
            { type: 'ROUTE.CHANGED', param: undefined },
            { type: 'ROUTE.CHANGED', param: '5' },
            { type: 'ROUTE.CHANGED', param: 'abc' },
            { type: 'DELETE', id: 5 },
            { type: 'CONVERSATION.CLEARED' },
            { type: 'CONVERSATION.CREATED', conversation: conversation(9) },
            {
              type: 'MESSAGES.APPENDED',
              conversationId: 5,
              messages: [
                {
                  id: 1,
                  role: 'user',
                  content: 'hi',
                  model: null,
                  tokensUsed: null,
                  createdAt: '2026-11-21T10:00:00.000Z',
                },
              ],
            },
            ...doneOf(snapshot, 'loadConversation', conversation(context.targetId ?? 0)),
            ...errorOf(snapshot, 'loadConversation', { status: 404 }),
            ...errorOf(snapshot, 'loadConversation', { status: 500 }),
            ...doneOf(snapshot, 'deleteConversation', undefined),
            ...errorOf(snapshot, 'deleteConversation', { status: 500 }),
          ]
        : []),
      ...(pageRests
        ? [
            { type: 'CONVERSATIONS.RETRY' },
            { type: 'MODELS.RETRY' },
            // Raised by the machine as the page gets ready after a failed first load.
            { type: 'CONVERSATIONS.FAILED' },
            { type: 'MODELS.FAILED' },
            ...doneOf(snapshot, 'loadModels', models),
            ...errorOf(snapshot, 'loadModels', new Error('offline')),
            ...doneOf(snapshot, 'loadConversations', list),
            ...errorOf(snapshot, 'loadConversations', new Error('offline')),
          ]
        : []),
    ];
  },
  // What tells the flows apart; equal keys must mean equal projected contexts.
  serializeState: (s) => JSON.stringify([s.value, project(s.context as ConversationRoutingContext)]),
  projectContext: (context) => project(context as ConversationRoutingContext),
  sut: (controls) =>
    conversationRoutingMachine.provide({
      actors: {
        loadModels: controls.promise('loadModels'),
        loadConversations: controls.promise('loadConversations'),
        loadConversation: controls.promise('loadConversation'),
        deleteConversation: controls.promise('deleteConversation'),
      } as never,
      actions: {
        navigate: (_, params) => {
          navigations.push(params);
        },
        redirectToChat: () => {
          redirects.push(1);
        },
        notifyError: (_, params) => {
          errors.push(params.problem);
        },
      },
    }),
  check: (snapshot, controls, event) => {
    const context = snapshot.context as ConversationRoutingContext;
    // SPEC 2: a route id that is not a whole number goes back to /chat (history replaced).
    if (event.type === 'ROUTE.CHANGED' && (event as { param?: string }).param === 'abc' && snapshot.matches('ready')) {
      expect(snapshot.matches({ ready: { conversation: 'none' } })).toBe(true);
      expect(redirects.length).toBeGreaterThan(0);
    }
    // The conversation loaded is the one the route names.
    if (snapshot.matches({ ready: { conversation: 'loading' } })) {
      const last = [...controls.inputs].reverse().find((i) => i.src === 'loadConversation');
      expect(last?.input).toEqual({ id: context.targetId });
    }
    if (snapshot.matches({ ready: { conversation: 'loaded' } })) expect(context.current?.id).toBe(context.targetId);
    if (snapshot.matches({ ready: { conversation: 'none' } })) expect(context.current).toBeNull();
    if (event.type === 'CONVERSATION.CREATED' && snapshot.matches('ready')) {
      expect(navigations.at(-1)).toEqual({ to: '/chat/9', replace: false });
      expect(context.conversations[0]?.id).toBe(9);
    }
    if (event.type.startsWith('xstate.error.actor') && !snapshot.matches({ ready: { conversation: 'notFound' } })) {
      expect(errors.length).toBeGreaterThan(0);
    }
    // A list that failed stays failed, with its SPEC text and Retry, until it loads.
    if (context.failures.conversations) {
      expect(context.failures.conversations).toEqual({
        code: 'loadConversations',
        message: 'Failed to load conversations',
      });
      // A failed list is never shown as an empty one ("no conversations yet").
      if (snapshot.matches('ready')) expect(snapshot.matches({ ready: { conversationList: 'loaded' } })).toBe(false);
    }
    if (context.failures.models) {
      expect(context.failures.models).toEqual({ code: 'loadModels', message: 'Failed to load available models' });
      if (snapshot.matches('ready')) expect(snapshot.matches({ ready: { modelList: 'loaded' } })).toBe(false);
    }
    // A deletion under way is not cancelled by opening another conversation.
    if (event.type === 'ROUTE.CHANGED' || event.type === 'CONVERSATION.CREATED') {
      if (context.deletingId !== null && snapshot.matches('ready')) {
        expect(snapshot.matches({ ready: { deletion: 'deleting' } })).toBe(true);
      }
    }
  },
});
