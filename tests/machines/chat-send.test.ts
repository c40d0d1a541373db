// One file: one chart's actor tests: its cases share the harness that answers its requests.
import { describe, expect, it } from 'vitest';
import {
  assign,
  createActor,
  createMachine,
  fromCallback,
  fromPromise,
  type ActorRefFrom,
  type AnyActorRef,
} from 'xstate';
import type { Conversation } from '../../src/domain/conversation';
import type { Problem } from '../../src/domain/errors';
import { chatMachine } from '../../src/machines/chat';
import type { chatReplyMachine } from '../../src/machines/chat-reply';
import {
  chatSendMachine,
  type ChatSendEvent,
  type ChatSendRef,
  type ChatStreamInput,
  type CreateConversationInput,
} from '../../src/machines/chat-send';
import type { conversationRoutingMachine } from '../../src/machines/conversation-routing';
import type { SessionRef } from '../../src/machines/session';

/**
 * The chat send chart through a running actor (SPEC section 4 "Chat send", section 5
 * "Chat"; issue #28 item 5 for a reply that goes on after its connection broke), for what
 * the screen's paths in tests/ui/chat-send.model.test.tsx cannot tell apart: what each
 * request carries and what the session (the header's balance), the conversation list and
 * the reply follower are told. Those three are recorders; the stream, the create and the
 * Stop requests are answered by the test.
 */

/** An actor that records every event it is sent. */
function recorder() {
  const got: Array<Record<string, unknown> & { type: string }> = [];
  const ref = createActor(
    fromCallback(({ receive }) => {
      receive((event) => got.push(event));
    }),
  ).start() as AnyActorRef;
  return { ref, got };
}

/** The reply follower as a chart that records every event it is sent (the chat chart reads its state). */
function replyRecorder() {
  const got: Array<Record<string, unknown> & { type: string }> = [];
  const machine = createMachine({
    on: { '*': { actions: ({ event }) => got.push(event as (typeof got)[number]) } },
  });
  return { machine, got };
}

/**
 * The conversation routing chart as the chat chart sees it for chat-send: the conversation it
 * is opening (`targetId`), the one open (`current`) and how its load went, in the states of
 * src/machines/conversation-routing.ts. It records what it is told.
 */
function routingStandIn() {
  const got: Array<Record<string, unknown> & { type: string }> = [];
  const machine = createMachine({
    types: {} as {
      context: { current: { id: number } | null; targetId: number | null };
      events: { type: string; id?: number };
    },
    context: { current: null, targetId: null },
    initial: 'ready',
    on: {
      '*': { actions: ({ event }) => got.push(event as (typeof got)[number]) },
    },
    states: {
      ready: {
        initial: 'conversation',
        states: {
          conversation: {
            initial: 'none',
            on: {
              'TEST.OPENING': { target: '.loading', actions: assign({ targetId: ({ event }) => event.id ?? null }) },
              'TEST.LOADED': {
                target: '.loaded',
                actions: assign({ current: ({ context }) => ({ id: context.targetId! }) }),
              },
              'TEST.NOT_FOUND': '.notFound',
              'TEST.FAILED': '.failed',
            },
            states: { none: {}, loading: {}, loaded: {}, notFound: {}, failed: {} },
          },
        },
      },
    },
  });
  return { machine, got: () => got.filter((event) => !event.type.startsWith('TEST.')) };
}

interface Held<I, O> {
  input: I;
  resolve(output: O): void;
  reject(error: unknown): void;
}

function chat(options: { routing?: boolean; draft?: string } = {}) {
  const session = recorder();
  const replies = replyRecorder();
  const standIn = options.routing === false ? null : routingStandIn();
  const streams: Array<{ input: ChatStreamInput; send: (event: ChatSendEvent) => void; stopped: boolean }> = [];
  const creates: Array<Held<CreateConversationInput, Conversation>> = [];
  const stops: Array<Held<{ conversationId: number }, { stopped: boolean }>> = [];
  const errors: Problem[] = [];
  const drafts: string[] = [];
  const machine = chatSendMachine.provide({
    actors: {
      chatStream: fromCallback<ChatSendEvent, ChatStreamInput>(({ input, sendBack }) => {
        const stream = { input, send: sendBack, stopped: false };
        streams.push(stream);
        return () => {
          stream.stopped = true;
        };
      }),
      createConversation: fromPromise<Conversation, CreateConversationInput>(
        ({ input }) => new Promise((resolve, reject) => creates.push({ input, resolve, reject })),
      ),
      stopReply: fromPromise<{ stopped: boolean }, { conversationId: number }>(
        ({ input }) => new Promise((resolve, reject) => stops.push({ input, resolve, reject })),
      ),
    },
    actions: {
      notifyError: (_, params: { problem: Problem }) => {
        errors.push(params.problem);
      },
      keepDraft: (_, params: { text: string }) => {
        drafts.push(params.text);
      },
    },
  });
  // With a conversation list, chat-send runs in the chat chart, which tells it when the
  // conversation it waits for opens; without one it runs alone.
  let actor: ChatSendRef;
  let routing: {
    ref: ActorRefFrom<NonNullable<typeof standIn>['machine']>;
    got: NonNullable<typeof standIn>['got'];
  } | null = null;
  if (standIn) {
    const page = createActor(
      chatMachine.provide({
        actors: {
          routing: standIn.machine as unknown as typeof conversationRoutingMachine,
          reply: replies.machine as unknown as typeof chatReplyMachine,
          send: machine,
        },
      }),
      { input: { session: session.ref as SessionRef, draft: options.draft } },
    ).start();
    actor = page.getSnapshot().context.send;
    routing = {
      ref: page.getSnapshot().context.routing as unknown as ActorRefFrom<typeof standIn.machine>,
      got: standIn.got,
    };
  } else {
    actor = createActor(machine, {
      input: {
        session: session.ref,
        routing: null,
        replies: createActor(replies.machine).start() as AnyActorRef,
        draft: options.draft,
      },
    }).start();
  }
  const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
  const type = (text: string) => actor.send({ type: 'DRAFT.CHANGE', text });
  const send = (fields: Partial<Extract<ChatSendEvent, { type: 'SEND' }>> = {}) =>
    actor.send({
      type: 'SEND',
      model: 'gpt-4o-mini',
      contextTokensLimit: 500,
      conversationId: 7,
      disabled: false,
      balance: 100,
      sentAt: '2026-11-28T10:00:00.000Z',
      ...fields,
    });
  const stream = () => streams.at(-1)!;
  const state = () => actor.getSnapshot().value;
  const context = () => actor.getSnapshot().context;
  return {
    actor,
    session,
    replies,
    routing,
    streams,
    creates,
    stops,
    errors,
    drafts,
    settle,
    type,
    send,
    stream,
    state,
    context,
  };
}

const failure: Problem = { code: 'CHAT_UPSTREAM', message: 'The model did not answer' };

describe('what is not sent (SPEC section 5: trimmed, not empty, not while disabled; section 6: the balance)', () => {
  it('sends nothing blank, nothing while the input is disabled, and nothing a balance below the cheapest reply cannot pay', () => {
    const c = chat();
    c.type('   ');
    c.send();
    c.type('hello');
    c.send({ disabled: true });
    c.send({ balance: 0 });
    expect(c.streams).toEqual([]);
    expect(c.state()).toBe('idle');
    expect(c.errors).toEqual([]);
    // One token pays the cheapest reply.
    c.send({ balance: 1 });
    expect(c.streams).toHaveLength(1);
  });

  it('says so when no model is chosen, and keeps the text', () => {
    const c = chat();
    c.type('hello');
    c.send({ model: null });
    c.send({ model: '' });
    expect(c.errors).toEqual([
      { code: 'noModelSelected', message: 'No model selected. Please select a model in settings.' },
      { code: 'noModelSelected', message: 'No model selected. Please select a model in settings.' },
    ]);
    expect(c.streams).toEqual([]);
    expect(c.context().draft).toBe('hello');
  });

  it('starts with an empty input when none was kept', () => {
    const c = chat();
    expect(c.drafts).toEqual(['']);
    expect(c.context().draft).toBe('');
  });

  it('keeps every change of the input, and the input it starts with (issue #26)', () => {
    const c = chat({ draft: 'left over' });
    c.type('left over, and more');
    expect(c.drafts).toEqual(['left over', 'left over, and more']);
  });
});

describe('an exchange in an open conversation', () => {
  it('streams the trimmed text with the chosen model, 2000 max tokens (SPEC 7) and the context limit, and empties the input', () => {
    const c = chat();
    c.type('  hello there  ');
    c.send({ contextTokensLimit: 800, model: 'gpt-4o' });
    expect(c.state()).toEqual({ streaming: 'receiving' });
    expect(c.stream().input).toEqual({
      conversationId: 7,
      message: 'hello there',
      model: 'gpt-4o',
      maxTokens: 2000,
      contextTokensLimit: 800,
    });
    expect(c.context().draft).toBe('');
    expect(c.replies.got).toEqual([{ type: 'OWN.STARTED', conversationId: 7 }]);
  });

  it('shows the user’s message and an empty reply at once, which the streamed text fills', () => {
    const c = chat();
    c.type('hello');
    c.send();
    expect(c.context().pending).toEqual({
      user: {
        id: -1,
        role: 'user',
        content: 'hello',
        model: null,
        tokensUsed: null,
        createdAt: '2026-11-28T10:00:00.000Z',
      },
      assistant: {
        id: -2,
        role: 'assistant',
        content: '',
        model: 'gpt-4o-mini',
        tokensUsed: null,
        createdAt: '2026-11-28T10:00:00.000Z',
      },
    });
    c.stream().send({ type: 'STREAM.CHUNK', content: 'Hi' });
    c.stream().send({ type: 'STREAM.CHUNK', content: ', you' });
    expect(c.context().pending?.assistant.content).toBe('Hi, you');
  });

  it('ignores a second send while the reply streams (SPEC 4)', () => {
    const c = chat();
    c.type('first');
    c.send();
    c.send();
    c.actor.send({
      type: 'RETRY',
      model: 'gpt-4o-mini',
      contextTokensLimit: 500,
      conversationId: 7,
      disabled: false,
      balance: 100,
      sentAt: 'x',
    });
    expect(c.streams).toHaveLength(1);
  });

  it('on completion hands both messages to the conversation, with the tokens used and the stored id, and the header gets the balance', async () => {
    const c = chat();
    c.type('hello');
    c.send();
    c.stream().send({ type: 'STREAM.CHUNK', content: 'Hi' });
    c.stream().send({ type: 'STREAM.COMPLETE', tokensUsed: 12, balanceAfter: 88, messageId: 501 });
    await c.settle();
    expect(c.state()).toBe('idle');
    expect(c.context().pending).toBeNull();
    expect(c.stream().stopped).toBe(true);
    const [appended] = c.routing!.got();
    expect(appended).toMatchObject({ type: 'MESSAGES.APPENDED', conversationId: 7 });
    expect(appended!.messages).toEqual([
      expect.objectContaining({ id: -1, role: 'user', content: 'hello' }),
      expect.objectContaining({ id: 501, role: 'assistant', content: 'Hi', tokensUsed: 12, model: 'gpt-4o-mini' }),
    ]);
    expect((appended!.messages as Array<Record<string, unknown>>)[1]).not.toHaveProperty('ending');
    expect(c.session.got).toEqual([{ type: 'BALANCE.CHANGED', balance: 88 }]);
    expect(c.replies.got.at(-1)).toEqual({ type: 'OWN.FINISHED', conversationId: 7, content: 'Hi' });
  });

  it('keeps a reply’s local id when the server names none, and its ending when it has one', async () => {
    const c = chat();
    c.type('hello');
    c.send();
    c.stream().send({ type: 'STREAM.CHUNK', content: 'Cut' });
    c.stream().send({ type: 'STREAM.COMPLETE', tokensUsed: 3, balanceAfter: 97, ending: 'length' });
    await c.settle();
    const [appended] = c.routing!.got();
    expect((appended!.messages as Array<Record<string, unknown>>)[1]).toMatchObject({ id: -2, ending: 'length' });
  });

  it('shows a reply the filter stopped before any text (its note), and hands on only the user’s message of an empty reply', async () => {
    const c = chat();
    c.type('one');
    c.send();
    c.stream().send({ type: 'STREAM.COMPLETE', tokensUsed: 1, balanceAfter: 99, ending: 'content_filter' });
    c.type('two');
    c.send();
    c.stream().send({ type: 'STREAM.COMPLETE', tokensUsed: 1, balanceAfter: 98 });
    await c.settle();
    const [first, second] = c.routing!.got();
    expect((first!.messages as unknown[]).length).toBe(2);
    expect(second!.messages).toEqual([expect.objectContaining({ role: 'user', content: 'two' })]);
  });

  it('gives each exchange’s messages ids of their own until the page reloads them', () => {
    const c = chat();
    c.type('one');
    c.send();
    c.stream().send({ type: 'STREAM.COMPLETE', tokensUsed: 1, balanceAfter: 99 });
    c.type('two');
    c.send();
    expect(c.context().pending?.user.id).toBe(-3);
    expect(c.context().pending?.assistant.id).toBe(-4);
  });
});

describe('a failed exchange (SPEC 4: the placeholder goes, the error is shown; nothing typed is lost)', () => {
  it('puts the text back in the input, marks the message with Retry, says why, and tells nothing to the conversation', async () => {
    const c = chat();
    c.type('hello');
    c.send();
    c.stream().send({ type: 'STREAM.ERROR', problem: failure });
    await c.settle();
    expect(c.state()).toBe('idle');
    expect(c.context().pending).toBeNull();
    expect(c.context().draft).toBe('hello');
    expect(c.context().failed).toEqual({ text: 'hello', problem: failure, conversationId: 7, kept: false });
    expect(c.errors).toEqual([failure]);
    expect(c.routing!.got()).toEqual([]);
    expect(c.session.got).toEqual([]);
    expect(c.drafts.at(-1)).toBe('hello');
  });

  it('hands on the user’s message the server kept when part of the reply had arrived', async () => {
    const c = chat();
    c.type('hello');
    c.send();
    c.stream().send({ type: 'STREAM.CHUNK', content: 'Hal' });
    c.stream().send({ type: 'STREAM.ERROR', problem: failure });
    await c.settle();
    expect(c.context().failed).toMatchObject({ kept: true });
    expect(c.routing!.got()).toEqual([
      {
        type: 'MESSAGES.APPENDED',
        conversationId: 7,
        messages: [expect.objectContaining({ role: 'user', content: 'hello' })],
      },
    ]);
  });

  it('gives the header the balance a refusal states, in its answer or its details', async () => {
    const c = chat();
    c.type('hello');
    c.send();
    c.stream().send({ type: 'STREAM.ERROR', problem: failure, balanceAfter: 40 });
    await c.settle();
    c.type('again');
    c.send();
    c.stream().send({
      type: 'STREAM.ERROR',
      problem: { code: 'INSUFFICIENT_TOKENS', message: 'Insufficient tokens', details: { balance: 0 } },
    });
    await c.settle();
    expect(c.session.got).toEqual([
      { type: 'BALANCE.CHANGED', balance: 40 },
      { type: 'BALANCE.CHANGED', balance: 0 },
    ]);
  });

  it('sends the failed text again on Retry, with the fields of the moment', () => {
    const c = chat();
    c.type('hello');
    c.send();
    c.stream().send({ type: 'STREAM.ERROR', problem: failure });
    c.type('');
    c.actor.send({
      type: 'RETRY',
      model: 'gpt-4o',
      contextTokensLimit: 300,
      conversationId: 7,
      disabled: false,
      balance: 100,
      sentAt: '2026-11-28T10:05:00.000Z',
    });
    expect(c.streams).toHaveLength(2);
    expect(c.stream().input).toMatchObject({ message: 'hello', model: 'gpt-4o', contextTokensLimit: 300 });
    expect(c.context().failed).toBeNull();
  });

  it('does nothing on Retry when nothing failed', () => {
    const c = chat();
    c.type('hello');
    c.actor.send({
      type: 'RETRY',
      model: 'gpt-4o',
      contextTokensLimit: 300,
      conversationId: 7,
      disabled: false,
      balance: 100,
      sentAt: 'x',
    });
    expect(c.streams).toEqual([]);
  });

  it('keeps what the user typed since, rather than the failed text', async () => {
    const c = chat();
    c.type('hello');
    c.send();
    // The input is disabled while streaming: a draft can only come from before (a restored session).
    c.actor.send({ type: 'DRAFT.CHANGE', text: 'ignored' });
    expect(c.context().draft).toBe('');
    c.stream().send({ type: 'STREAM.ERROR', problem: failure });
    await c.settle();
    expect(c.context().draft).toBe('hello');
  });
});

describe('a reply that ends without its last frame', () => {
  it('stopped ([DONE]): both messages are handed on and the header reads the billed balance again', async () => {
    const c = chat();
    c.type('hello');
    c.send();
    c.stream().send({ type: 'STREAM.CHUNK', content: 'Partial' });
    c.stream().send({ type: 'STREAM.ENDED' });
    await c.settle();
    expect(c.state()).toBe('idle');
    expect((c.routing!.got()[0]!.messages as unknown[]).length).toBe(2);
    expect(c.context().pending).toBeNull();
    expect(c.session.got).toEqual([{ type: 'USER.REFRESH' }]);
    expect(c.context().failed).toBeNull();
  });

  it('the connection lost before the first words: a failure like any other', async () => {
    const c = chat();
    c.type('hello');
    c.send();
    c.stream().send({ type: 'STREAM.LOST', problem: failure });
    await c.settle();
    expect(c.context().failed).toEqual({ text: 'hello', problem: failure, conversationId: 7, kept: false });
    expect(c.errors).toEqual([failure]);
    expect(c.replies.got.map((event) => event.type)).toEqual(['OWN.STARTED', 'OWN.FINISHED']);
  });

  it('the connection lost after them: the reply follower takes it over, with the text so far (issue #28 item 5)', async () => {
    const c = chat();
    c.type('hello');
    c.send();
    c.stream().send({ type: 'STREAM.CHUNK', content: 'Half a' });
    c.stream().send({ type: 'STREAM.LOST', problem: failure });
    await c.settle();
    expect(c.state()).toBe('idle');
    expect(c.context().failed).toBeNull();
    expect(c.errors).toEqual([]);
    expect(c.context().pending).toBeNull();
    expect(c.replies.got).toContainEqual({
      type: 'OWN.LOST',
      conversationId: 7,
      content: 'Half a',
      model: 'gpt-4o-mini',
      startedAt: '2026-11-28T10:00:00.000Z',
    });
    expect(c.routing!.got()).toEqual([
      { type: 'MESSAGES.APPENDED', conversationId: 7, messages: [expect.objectContaining({ content: 'hello' })] },
    ]);
  });
});

describe('Stop', () => {
  it('asks the server to stop the open conversation’s reply, and waits for the stream’s end', async () => {
    const c = chat();
    c.type('hello');
    c.send();
    c.actor.send({ type: 'STOP' });
    expect(c.state()).toEqual({ streaming: 'stopping' });
    expect(c.stops.map((stop) => stop.input)).toEqual([{ conversationId: 7 }]);
    c.stops[0]!.resolve({ stopped: true });
    await c.settle();
    expect(c.state()).toEqual({ streaming: 'stopAsked' });
    c.actor.send({ type: 'STOP' });
    expect(c.stops).toHaveLength(1);
  });

  it('says why a Stop failed, and Stop asks again', async () => {
    const c = chat();
    c.type('hello');
    c.send();
    c.actor.send({ type: 'STOP' });
    c.stops[0]!.reject({ code: 'NOT_FOUND', message: 'Resource not found' });
    await c.settle();
    expect(c.state()).toEqual({ streaming: 'stopFailed' });
    expect(c.context().stopProblem).toMatchObject({ code: 'NOT_FOUND', message: 'Resource not found' });
    expect(c.errors).toEqual([expect.objectContaining({ code: 'NOT_FOUND' })]);
    c.actor.send({ type: 'STOP' });
    expect(c.state()).toEqual({ streaming: 'stopping' });
    expect(c.context().stopProblem).toBeNull();
    expect(c.stops).toHaveLength(2);
  });

  it('a Stop that fails without a code is a network error', async () => {
    const c = chat();
    c.type('hello');
    c.send();
    c.actor.send({ type: 'STOP' });
    c.stops[0]!.reject(new TypeError('fetch failed'));
    await c.settle();
    expect(c.context().stopProblem).toEqual({ code: 'stopReply', message: 'Network error occurred' });
  });
});

describe('the first message of a new conversation (SPEC 4: a conversation is ensured)', () => {
  const conversation = (id: number): Conversation => ({
    id,
    title: 'New Chat',
    isDeleted: false,
    createdAt: '2026-11-28T10:00:00.000Z',
    updatedAt: '2026-11-28T10:00:00.000Z',
    messages: [],
  });

  it('creates "New Chat" with the message, model and limits, tells the list, and streams once the conversation is open', async () => {
    const c = chat();
    c.type(' hi ');
    c.send({ conversationId: null, contextTokensLimit: 700 });
    expect(c.state()).toBe('creating');
    expect(c.creates.map((create) => create.input)).toEqual([
      { title: 'New Chat', message: 'hi', model: 'gpt-4o-mini', contextTokensLimit: 700, maxTokens: 2000 },
    ]);
    c.creates[0]!.resolve(conversation(42));
    await c.settle();
    expect(c.state()).toBe('waitingForConversation');
    expect(c.routing!.got()).toEqual([{ type: 'CONVERSATION.CREATED', conversation: conversation(42) }]);
    expect(c.streams).toEqual([]);

    // The routing chart opens another conversation first: not this one.
    c.routing!.ref.send({ type: 'TEST.OPENING', id: 41 });
    c.routing!.ref.send({ type: 'TEST.LOADED' });
    expect(c.state()).toBe('waitingForConversation');
    c.routing!.ref.send({ type: 'TEST.OPENING', id: 42 });
    expect(c.state()).toBe('waitingForConversation');
    c.routing!.ref.send({ type: 'TEST.LOADED' });
    expect(c.state()).toEqual({ streaming: 'receiving' });
    expect(c.stream().input).toMatchObject({ conversationId: 42, message: 'hi', contextTokensLimit: 700 });
  });

  it('streams at once when the conversation is already open as the create answers', async () => {
    const c = chat();
    c.type('hi');
    c.send({ conversationId: null });
    c.routing!.ref.send({ type: 'TEST.OPENING', id: 42 });
    c.routing!.ref.send({ type: 'TEST.LOADED' });
    c.creates[0]!.resolve(conversation(42));
    await c.settle();
    expect(c.state()).toEqual({ streaming: 'receiving' });
  });

  for (const outcome of ['TEST.NOT_FOUND', 'TEST.FAILED'] as const) {
    it(`fails with "Failed to create or load conversation" when it cannot be opened (${outcome.slice(5)})`, async () => {
      const c = chat();
      c.type('hi');
      c.send({ conversationId: null });
      c.creates[0]!.resolve(conversation(42));
      await c.settle();
      c.routing!.ref.send({ type: 'TEST.OPENING', id: 42 });
      c.routing!.ref.send({ type: outcome });
      const problem = { code: 'createOrLoadConversation', message: 'Failed to create or load conversation' };
      expect(c.state()).toBe('idle');
      expect(c.context().failed).toEqual({ text: 'hi', problem, conversationId: 42, kept: false });
      expect(c.errors).toEqual([problem]);
      expect(c.context().draft).toBe('hi');
    });
  }

  it('fails at once without a conversation list to open it in', async () => {
    const c = chat({ routing: false });
    c.type('hi');
    c.send({ conversationId: null });
    c.creates[0]!.resolve(conversation(42));
    await c.settle();
    expect(c.state()).toBe('idle');
    expect(c.context().failed?.problem.code).toBe('createOrLoadConversation');
  });

  it('a refused create gives the text back, says why, and gives the header the balance it states', async () => {
    const c = chat();
    c.type('hi');
    c.send({ conversationId: null });
    const refusal = { code: 'INSUFFICIENT_TOKENS', message: 'Insufficient tokens', details: { balance: 0 } };
    c.creates[0]!.reject(refusal);
    await c.settle();
    expect(c.state()).toBe('idle');
    expect(c.context().failed).toMatchObject({ text: 'hi', conversationId: null, kept: false });
    expect(c.context().failed?.problem).toMatchObject({ code: 'INSUFFICIENT_TOKENS' });
    expect(c.errors).toEqual([expect.objectContaining({ code: 'INSUFFICIENT_TOKENS' })]);
    expect(c.session.got).toEqual([{ type: 'BALANCE.CHANGED', balance: 0 }]);
    expect(c.streams).toEqual([]);
  });

  it('a create that fails without a code says "Failed to create conversation"', async () => {
    const c = chat();
    c.type('hi');
    c.send({ conversationId: null });
    c.creates[0]!.reject(new TypeError('fetch failed'));
    await c.settle();
    expect(c.errors).toEqual([{ code: 'createConversation', message: 'Failed to create conversation' }]);
    expect(c.session.got).toEqual([]);
  });
});
