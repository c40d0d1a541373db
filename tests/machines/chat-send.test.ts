import { describe, expect, it } from 'vitest';
import { createActor, fromCallback, fromPromise, waitFor, type AnyEventObject, type AnyMachineSnapshot } from 'xstate';
import type { Conversation } from '../../src/domain/conversation';
import type { Problem } from '../../src/domain/errors';
import {
  chatSendMachine,
  type ChatSendContext,
  type ChatSendEvent,
  type ChatStreamInput,
  type CreateConversationInput,
} from '../../src/machines/chat-send';
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
const toasts: Problem[] = [];

const created: Conversation = {
  id: 9,
  title: 'New Chat',
  isDeleted: false,
  createdAt: '2026-11-20T10:00:00.000Z',
  updatedAt: '2026-11-20T10:00:00.000Z',
  messages: [],
};
const fields = (conversationId: number | null, extra: Record<string, unknown> = {}) => ({
  model: 'gpt-4o',
  contextTokensLimit: 500,
  conversationId,
  disabled: false,
  balance: 50,
  sentAt: '2026-11-21T10:00:00.000Z',
  ...extra,
});
const send = (conversationId: number | null, extra: Record<string, unknown> = {}) => ({
  type: 'SEND',
  ...fields(conversationId, extra),
});

/** A refused charge as the API reports it: its code, and the balance and cost in details. */
const refusal = {
  code: 'INSUFFICIENT_TOKENS',
  message: 'Insufficient tokens. Need 3 tokens but only have 1',
  details: { balance: 1, cost: 3 },
};
const refusedProblem: Problem = { code: 'INSUFFICIENT_TOKENS', message: refusal.message, details: refusal.details };

const project = (c: ChatSendContext) => ({
  draftBlank: c.draft.trim() === '',
  conversationId: c.conversationId,
  pendingText: c.pending ? c.pending.assistant.content.length > 0 : null,
  failed: c.failed ? { code: c.failed.problem.code, kept: c.failed.kept, id: c.failed.conversationId } : null,
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
    send(null, { balance: 0 }),
    { type: 'RETRY', ...fields(5) },
    { type: 'STOP' },
    // A callback actor can only speak while it runs.
    ...(snapshot.matches('streaming')
      ? [
          { type: 'STREAM.CHUNK', content: 'Hi' },
          { type: 'STREAM.COMPLETE', tokensUsed: 12, balanceAfter: 47, messageId: 30 },
          { type: 'STREAM.ERROR', problem: refusedProblem },
          {
            type: 'STREAM.ERROR',
            problem: { code: 'CHAT_UPSTREAM', message: 'The language model service failed.' },
            balanceAfter: 48,
          },
        ]
      : []),
    ...(snapshot.matches('waitingForConversation')
      ? [{ type: 'CONVERSATION.READY' }, { type: 'CONVERSATION.FAILED' }]
      : []),
    ...doneOf(snapshot, 'createConversation', created),
    ...errorOf(snapshot, 'createConversation', refusal),
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
          toasts.push(params.problem);
        },
      },
    }),
  check: (snapshot, controls, event) => {
    const context = snapshot.context as ChatSendContext;
    if (snapshot.matches('streaming')) {
      // A user message and an assistant placeholder are shown; the stream gets the request.
      expect(context.pending?.user.role).toBe('user');
      expect(context.pending?.assistant.role).toBe('assistant');
      expect(context.failed).toBeNull();
      const stream = controls.running('chatStream');
      expect(stream?.input).toMatchObject({ maxTokens: 2000, contextTokensLimit: 500, model: 'gpt-4o' });
    }
    if (snapshot.matches('creating')) {
      // The server is told the first message, so it can refuse before creating anything.
      const last = [...controls.inputs].reverse().find((i) => i.src === 'createConversation');
      expect((last?.input as CreateConversationInput).message).toBe(context.pending?.user.content);
      expect(last?.input).toMatchObject({ title: 'New Chat', model: 'gpt-4o', contextTokensLimit: 500 });
    }
    if (snapshot.matches('idle')) expect(context.pending).toBeNull();
    if (event.type === 'STREAM.COMPLETE') {
      expect(received).toContainEqual({ type: 'BALANCE.CHANGED', balance: 47 });
      const appended = [...received].reverse().find((e) => e.type === 'MESSAGES.APPENDED');
      expect((appended?.messages as Array<{ role: string }>)[0]?.role).toBe('user');
    }
    if (event.type === 'STREAM.ERROR' && snapshot.matches('idle')) {
      const problem = (event as unknown as { problem: Problem }).problem;
      // Nothing typed is lost: the text is back in the input, the failed message offers Retry.
      expect(context.failed?.problem).toEqual(problem);
      // Shown as a notification too (SPEC section 4).
      expect(toasts.at(-1)).toEqual(problem);
      expect(context.draft).toBe(context.failed?.text);
      expect(context.draft.trim()).not.toBe('');
      // The header takes the balance the server stated.
      const stated = (event as { balanceAfter?: number }).balanceAfter ?? 1;
      expect(received.at(-1)).toEqual({ type: 'BALANCE.CHANGED', balance: stated });
    }
    if (event.type.startsWith('xstate.error.actor') && snapshot.matches('idle') && context.failed) {
      // A refused first message: nothing created, the text back, the balance corrected.
      expect(context.failed.problem).toEqual(refusedProblem);
      expect(toasts.at(-1)).toEqual(refusedProblem);
      expect(context.failed.conversationId).toBeNull();
      expect(context.draft).toBe(context.failed.text);
      expect(received.at(-1)).toEqual({ type: 'BALANCE.CHANGED', balance: 1 });
    }
    if (event.type === 'SEND' && (event as { model?: unknown }).model === null && snapshot.matches('idle')) {
      if (context.draft.trim() !== '') expect(toasts.at(-1)?.code).toBe('noModelSelected');
    }
    if (event.type.startsWith('xstate.done.actor') && snapshot.matches('waitingForConversation')) {
      expect(received).toContainEqual({ type: 'CONVERSATION.CREATED', conversation: created });
    }
  },
});

describe('chat-send: what the user typed is never lost', () => {
  const start = (stream: (sendBack: (event: ChatSendEvent) => void) => void, create = created) => {
    const events: AnyEventObject[] = [];
    const sessionActor = createActor(
      fromCallback<AnyEventObject>(({ receive }) => {
        receive((event) => events.push(event));
      }),
    ).start();
    const actor = createActor(
      chatSendMachine.provide({
        actors: {
          createConversation: fromPromise<Conversation, CreateConversationInput>(async () => create),
          conversationReady: fromCallback(({ sendBack }) => {
            sendBack({ type: 'CONVERSATION.READY' });
          }),
          chatStream: fromCallback<ChatSendEvent, ChatStreamInput>(({ sendBack }) => {
            stream(sendBack);
          }),
        },
      }),
      { input: { session: sessionActor, routing: null } },
    ).start();
    return { actor, events };
  };

  it('a refused stream returns the text to the input, keeps the message with Retry, and Retry sends it again', async () => {
    let attempts = 0;
    const { actor, events } = start((sendBack) => {
      attempts += 1;
      if (attempts === 1) sendBack({ type: 'STREAM.ERROR', problem: refusedProblem });
      else sendBack({ type: 'STREAM.COMPLETE', tokensUsed: 3, balanceAfter: 0 });
    });
    actor.send({ type: 'DRAFT.CHANGE', text: '  What is a monad?  ' });
    actor.send({ type: 'SEND', ...fields(5) });
    await waitFor(actor, (s) => s.matches('idle') && s.context.failed !== null);
    expect(actor.getSnapshot().context.draft).toBe('What is a monad?');
    expect(actor.getSnapshot().context.failed).toMatchObject({ text: 'What is a monad?', kept: false });
    expect(events).toContainEqual({ type: 'BALANCE.CHANGED', balance: 1 });
    // The user edits the input meanwhile; Retry still sends the failed text.
    actor.send({ type: 'DRAFT.CHANGE', text: 'something else' });
    actor.send({ type: 'RETRY', ...fields(5) });
    await waitFor(actor, (s) => s.matches('idle') && s.context.failed === null);
    expect(attempts).toBe(2);
    expect(events.at(-1)).toEqual({ type: 'BALANCE.CHANGED', balance: 0 });
  });

  it('a first message with no balance at all sends nothing and creates nothing', () => {
    const { actor } = start(() => {});
    actor.send({ type: 'DRAFT.CHANGE', text: 'Hello' });
    actor.send({ type: 'SEND', ...fields(null, { balance: 0 }) });
    expect(actor.getSnapshot().matches('idle')).toBe(true);
    expect(actor.getSnapshot().context.draft).toBe('Hello');
    expect(actor.getSnapshot().context.pending).toBeNull();
  });
});
