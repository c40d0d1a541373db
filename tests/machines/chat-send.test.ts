import { expect } from 'vitest';
import { createActor, fromCallback, type AnyEventObject, type AnyMachineSnapshot } from 'xstate';
import type { Conversation } from '../../src/domain/conversation';
import { chatSendMachine, type ChatSendContext } from '../../src/machines/chat-send';
import { describeModel, doneOf, errorOf } from './harness';

// Stand-ins for the session and routing actors: they record what chat-send tells them.
const received: AnyEventObject[] = [];
const recorder = () =>
  createActor(
    fromCallback<AnyEventObject>(({ receive }) => {
      receive((event) => received.push(event));
    }),
  ).start();
const session = recorder();
const routing = recorder();
const toasts: string[] = [];

const created: Conversation = {
  id: 9,
  title: 'New Chat',
  isDeleted: false,
  createdAt: '2026-11-20T10:00:00.000Z',
  updatedAt: '2026-11-20T10:00:00.000Z',
  messages: [],
};
const send = (conversationId: number | null, extra: Record<string, unknown> = {}) => ({
  type: 'SEND',
  model: 'gpt-4o',
  contextTokensLimit: 500,
  conversationId,
  disabled: false,
  sentAt: '2026-11-21T10:00:00.000Z',
  ...extra,
});

const project = (c: ChatSendContext) => ({
  draftBlank: c.draft.trim() === '',
  conversationId: c.conversationId,
  pendingText: c.pending ? c.pending.assistant.content.length > 0 : null,
});

describeModel('chat-send', {
  machine: chatSendMachine,
  input: { session, routing },
  events: (snapshot: AnyMachineSnapshot) => [
    { type: 'DRAFT.CHANGE', text: 'Hello' },
    { type: 'DRAFT.CHANGE', text: '   ' },
    send(5),
    send(null),
    send(5, { model: null }),
    send(5, { disabled: true }),
    { type: 'STOP' },
    // A callback actor can only speak while it runs.
    ...(snapshot.matches('streaming')
      ? [
          { type: 'STREAM.CHUNK', content: 'Hi' },
          { type: 'STREAM.COMPLETE', tokensUsed: 12, balanceAfter: 47, messageId: 30 },
          { type: 'STREAM.ERROR', message: 'Insufficient tokens' },
          { type: 'STREAM.ERROR', message: 'The language model service failed.', balanceAfter: 48 },
        ]
      : []),
    ...(snapshot.matches('waitingForConversation')
      ? [{ type: 'CONVERSATION.READY' }, { type: 'CONVERSATION.FAILED' }]
      : []),
    ...doneOf(snapshot, 'createConversation', created),
    ...errorOf(snapshot, 'createConversation', new Error('500')),
    ...doneOf(snapshot, 'settleDelay', undefined),
    ...errorOf(snapshot, 'settleDelay', new Error('x')),
  ],
  emittedBy: {
    'STREAM.CHUNK': 'chatStream',
    'STREAM.COMPLETE': 'chatStream',
    'STREAM.ERROR': 'chatStream',
    'CONVERSATION.READY': 'conversationReady',
    'CONVERSATION.FAILED': 'conversationReady',
  },
  serializeState: (s) => JSON.stringify([s.value, project(s.context as ChatSendContext)]),
  // Only what tells the flows apart: equal keys must mean equal projected contexts.
  projectContext: (context) => project(context as ChatSendContext),
  sut: (controls) =>
    chatSendMachine.provide({
      actors: {
        createConversation: controls.promise('createConversation'),
        conversationReady: controls.callback('conversationReady'),
        chatStream: controls.callback('chatStream'),
        settleDelay: controls.promise('settleDelay'),
      } as never,
      actions: {
        notifyError: (_, params) => {
          toasts.push(params.message);
        },
      },
    }),
  check: (snapshot, controls, event) => {
    const context = snapshot.context as ChatSendContext;
    if (snapshot.matches('streaming')) {
      // A user message and an assistant placeholder are shown; the stream gets the request.
      expect(context.pending?.user.role).toBe('user');
      expect(context.pending?.assistant.role).toBe('assistant');
      const stream = controls.running('chatStream');
      expect(stream?.input).toMatchObject({ maxTokens: 2000, contextTokensLimit: 500, model: 'gpt-4o' });
    }
    if (snapshot.matches('idle')) expect(context.pending).toBeNull();
    if (event.type === 'STREAM.COMPLETE') {
      expect(received).toContainEqual({ type: 'BALANCE.CHANGED', balance: 47 });
      const appended = [...received].reverse().find((e) => e.type === 'MESSAGES.APPENDED');
      expect((appended?.messages as Array<{ role: string }>)[0]?.role).toBe('user');
    }
    if (event.type === 'STREAM.ERROR' && snapshot.matches('idle')) {
      expect(toasts.at(-1)).toBe((event as { message?: string }).message);
      const appended = [...received].reverse().find((e) => e.type === 'MESSAGES.APPENDED');
      // The placeholder assistant message is removed; the user's message stays.
      expect((appended?.messages as unknown[]).length).toBe(1);
    }
    if (event.type === 'SEND' && (event as { model?: unknown }).model === null && snapshot.matches('idle')) {
      if (context.draft.trim() !== '')
        expect(toasts.at(-1)).toBe('No model selected. Please select a model in settings.');
    }
    if (event.type.startsWith('xstate.done.actor') && snapshot.matches('waitingForConversation')) {
      expect(received).toContainEqual({ type: 'CONVERSATION.CREATED', conversation: created });
    }
  },
});
