import { describe, expect, it } from 'vitest';
import {
  SimulatedClock,
  assign,
  createActor,
  createMachine,
  fromCallback,
  fromPromise,
  type ActorRefFrom,
} from 'xstate';
import type { Conversation, Message, PendingReply } from '../../src/domain/conversation';
import type { ReplyEvent } from '../../src/domain/jobs';
import { chatMachine } from '../../src/machines/chat';
import { FOLLOW_QUIET_MS, chatReplyMachine } from '../../src/machines/chat-reply';
import type { conversationRoutingMachine } from '../../src/machines/conversation-routing';
import type { QueueRef } from '../../src/machines/queue';
import type { SessionRef } from '../../src/machines/session';
import { replyQueue } from './support/chat-page';

/**
 * The chat-reply chart through a running actor in the chat chart, which tells it the
 * conversation on screen (issue #28 item 5: a reply goes on when its page goes, and is
 * followed from a reload or another tab). The routing actor and the queue are small stand-ins
 * with the shapes read: the routing's `ready.conversation.loaded` state with
 * `context.current`, and the queue's emitted `REPLY.EVENT`. Expectations are the issue's: what
 * is followed, what reaches the conversation on screen and the header, and what Stop asks of
 * the server.
 */
const MESSAGE: Message = {
  id: 90,
  role: 'assistant',
  content: 'Hello there',
  model: 'gpt-4o-mini',
  tokensUsed: 12,
  createdAt: '2026-11-27T10:00:05.000Z',
};

function conversation(id: number, pendingReply?: PendingReply): Conversation {
  return {
    id,
    title: `Chat ${id}`,
    isDeleted: false,
    createdAt: '2026-11-27T10:00:00.000Z',
    updatedAt: '2026-11-27T10:00:00.000Z',
    messages: [],
    ...(pendingReply ? { pendingReply } : {}),
  };
}

const pending = (requestId: number, content: string): PendingReply => ({
  requestId,
  model: 'gpt-4o-mini',
  content,
  startedAt: '2026-11-27T10:00:01.000Z',
});

function reply(conversationId: number, requestId: number, content: string, done = false): ReplyEvent {
  return {
    conversationId,
    requestId,
    model: 'gpt-4o-mini',
    content,
    done,
    ...(done ? { message: { ...MESSAGE, content }, balance: 40 } : {}),
  };
}

function chat() {
  /** What the chart told the conversation on screen, and the header. */
  const told: string[] = [];
  const routingStandIn = createMachine({
    types: {} as {
      context: { current: Conversation | null };
      events:
        | { type: 'OPEN'; conversation: Conversation }
        | { type: 'CLOSE' }
        | { type: 'MESSAGES.APPENDED'; conversationId: number; messages: Message[] }
        | { type: 'CONVERSATION.UPDATED'; conversation: Conversation };
    },
    context: { current: null },
    initial: 'ready',
    on: {
      'MESSAGES.APPENDED': {
        actions: ({ event }) => told.push(`appended ${event.conversationId}: ${event.messages[0]!.content}`),
      },
      'CONVERSATION.UPDATED': { actions: ({ event }) => told.push(`updated ${event.conversation.id}`) },
    },
    states: {
      ready: {
        initial: 'conversation',
        states: {
          conversation: {
            initial: 'none',
            on: {
              OPEN: { target: '.loaded', actions: assign({ current: ({ event }) => event.conversation }) },
              CLOSE: { target: '.none', actions: assign({ current: null }) },
            },
            states: { none: {}, loaded: {} },
          },
        },
      },
    },
  });
  const queue = replyQueue();
  const session = createActor(
    fromCallback(({ receive }) => {
      receive((event) => told.push(`session ${event.type}`));
    }),
  ).start();

  const loads: Array<{ id: number; resolve: (c: Conversation) => void; reject: (e: unknown) => void }> = [];
  const stops: Array<{ id: number; resolve: (r: { stopped: boolean }) => void; reject: (e: unknown) => void }> = [];
  const clock = new SimulatedClock();
  const page = createActor(
    chatMachine.provide({
      actors: {
        routing: routingStandIn as unknown as typeof conversationRoutingMachine,
        reply: chatReplyMachine.provide({
          actors: {
            loadConversation: fromPromise<Conversation, { id: number }>(
              ({ input }) => new Promise((resolve, reject) => loads.push({ id: input.id, resolve, reject })),
            ),
            stopReply: fromPromise<{ stopped: boolean }, { conversationId: number }>(
              ({ input }) =>
                new Promise((resolve, reject) => stops.push({ id: input.conversationId, resolve, reject })),
            ),
          },
          actions: {
            notifyError: (_, params) => told.push(`toast ${params.problem.code}`),
            logFailure: (_, params) => told.push(`logged ${params.what}`),
          },
        }),
      },
    }),
    { input: { session: session as unknown as SessionRef, queue: queue as unknown as QueueRef }, clock },
  ).start();
  const actor = page.getSnapshot().context.reply;
  const routing = page.getSnapshot().context.routing as unknown as ActorRefFrom<typeof routingStandIn>;
  const event = (e: ReplyEvent) => queue.send({ type: 'PUSH', event: e });
  const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
  const shown = () => {
    const { follow } = actor.getSnapshot().context;
    return follow ? `${follow.conversationId}/${follow.requestId}: ${follow.content}` : null;
  };
  return { actor, routing, event, loads, stops, told, clock, settle, shown };
}

describe('a reply written elsewhere, followed on the conversation on screen', () => {
  it('after a reload: shows the reply so far, grows it with its events, never shrinks it, and hands over the stored message at its end', () => {
    const { actor, routing, event, told, shown } = chat();
    routing.send({ type: 'OPEN', conversation: conversation(5, pending(50, 'Hel')) });
    expect(actor.getSnapshot().matches({ following: 'watching' })).toBe(true);
    expect(shown()).toBe('5/50: Hel');
    // The same conversation read again tells nothing new.
    routing.send({ type: 'OPEN', conversation: conversation(5, pending(50, 'H')) });
    expect(shown()).toBe('5/50: Hel');
    event(reply(5, 50, 'Hello'));
    event(reply(5, 50, 'He'));
    expect(shown()).toBe('5/50: Hello');
    // Another conversation's reply, and another reply of this one, are not this one.
    event(reply(6, 50, 'Elsewhere', true));
    event(reply(5, 51, 'Other', true));
    expect(actor.getSnapshot().matches('following')).toBe(true);
    event(reply(5, 50, 'Hello there', true));
    expect(actor.getSnapshot().matches('idle')).toBe(true);
    expect(told).toEqual(['appended 5: Hello there']);
    // A late word about the ended reply starts nothing, and neither does its pending reply in a reading.
    event(reply(5, 50, 'Hello there'));
    routing.send({ type: 'CLOSE' });
    routing.send({ type: 'OPEN', conversation: conversation(5, pending(50, 'Hello')) });
    expect(actor.getSnapshot().matches('idle')).toBe(true);
  });

  it('from another tab: reads the conversation first, then follows the reply while it is written', async () => {
    const { actor, routing, event, loads, told, shown, settle } = chat();
    routing.send({ type: 'OPEN', conversation: conversation(5) });
    event(reply(6, 60, 'Not on screen'));
    expect(actor.getSnapshot().matches('idle')).toBe(true);
    event(reply(5, 50, 'Hi'));
    expect(actor.getSnapshot().matches({ following: 'checking' })).toBe(true);
    expect(loads.map((l) => l.id)).toEqual([5]);
    loads[0]!.resolve(conversation(5, pending(50, 'Hi th')));
    await settle();
    expect(actor.getSnapshot().matches({ following: 'watching' })).toBe(true);
    expect(shown()).toBe('5/50: Hi th');
    expect(told).toEqual(['updated 5']);
  });

  it('keeps the longer text when the reading is older than the events already shown', async () => {
    const { routing, event, loads, shown, settle } = chat();
    routing.send({ type: 'OPEN', conversation: conversation(5) });
    event(reply(5, 50, 'Hi there'));
    loads[0]!.resolve(conversation(5, pending(50, 'Hi')));
    await settle();
    expect(shown()).toBe('5/50: Hi there');
  });

  it('shows the reading’s own text when it has a later reply than the event', async () => {
    const { routing, event, loads, shown, settle } = chat();
    routing.send({ type: 'OPEN', conversation: conversation(5) });
    event(reply(5, 50, 'An earlier reply, long'));
    loads[0]!.resolve(conversation(5, pending(51, 'Hi')));
    await settle();
    expect(shown()).toBe('5/51: Hi');
  });

  it('reads the conversation again when the reply ends while it is read, and when nothing is heard for a while', async () => {
    const { actor, routing, event, loads, told, clock, settle } = chat();
    routing.send({ type: 'OPEN', conversation: conversation(5) });
    event(reply(5, 50, 'Hi'));
    event(reply(5, 50, 'Hi there', true));
    expect(loads.map((l) => l.id)).toEqual([5, 5]);
    loads[1]!.resolve(conversation(5, pending(50, 'Hi there and on')));
    await settle();
    expect(actor.getSnapshot().matches({ following: 'watching' })).toBe(true);
    // Each event puts off the next reading; a quiet spell brings it.
    clock.increment(FOLLOW_QUIET_MS - 1);
    event(reply(5, 50, 'Hi there and on and on'));
    clock.increment(FOLLOW_QUIET_MS - 1);
    expect(loads).toHaveLength(2);
    clock.increment(1);
    expect(loads).toHaveLength(3);
    // Ended without its end being heard: the conversation shows it and the header reads the balance.
    loads[2]!.resolve(conversation(5));
    await settle();
    expect(actor.getSnapshot().matches('idle')).toBe(true);
    expect(told).toEqual(['updated 5', 'updated 5', 'session USER.REFRESH']);
  });

  it('a failed reading is logged and the reply goes on being followed', async () => {
    const { actor, routing, event, loads, told, settle } = chat();
    routing.send({ type: 'OPEN', conversation: conversation(5) });
    event(reply(5, 50, 'Hi'));
    loads[0]!.reject(new TypeError('Failed to fetch'));
    await settle();
    expect(actor.getSnapshot().matches({ following: 'watching' })).toBe(true);
    expect(told).toEqual(['logged reading the conversation']);
  });

  it('leaves the reply to go on when another conversation opens, and follows that one’s reply', () => {
    const { actor, routing, shown } = chat();
    routing.send({ type: 'OPEN', conversation: conversation(5, pending(50, 'Hi')) });
    routing.send({ type: 'OPEN', conversation: conversation(6, pending(60, 'Yo')) });
    expect(shown()).toBe('6/60: Yo');
    routing.send({ type: 'CLOSE' });
    expect(actor.getSnapshot().matches('idle')).toBe(true);
    expect(actor.getSnapshot().context.shownId).toBeNull();
  });
});

describe('this tab’s own reply', () => {
  it('is not followed while it streams, and its events name its request for later', () => {
    const { actor, routing, event } = chat();
    routing.send({ type: 'OPEN', conversation: conversation(5) });
    actor.send({ type: 'OWN.STARTED', conversationId: 5 });
    event(reply(5, 50, 'Hi'));
    expect(actor.getSnapshot().matches('idle')).toBe(true);
    actor.send({ type: 'OWN.FINISHED', conversationId: 5, content: 'Hi there' });
    // Its last events, arriving after it finished here, are still its own.
    event(reply(5, 50, 'Hi there', true));
    expect(actor.getSnapshot().matches('idle')).toBe(true);
    // Another tab's reply in the same conversation is followed.
    event(reply(5, 51, 'Other'));
    expect(actor.getSnapshot().matches({ following: 'checking' })).toBe(true);
  });

  it('known by its text when it finished before any event named it', () => {
    const { actor, routing, event } = chat();
    routing.send({ type: 'OPEN', conversation: conversation(5) });
    actor.send({ type: 'OWN.STARTED', conversationId: 5 });
    actor.send({ type: 'OWN.FINISHED', conversationId: 5, content: 'Hi there' });
    event(reply(5, 50, 'Hi'));
    expect(actor.getSnapshot().matches('idle')).toBe(true);
    event(reply(5, 51, 'Other'));
    expect(actor.getSnapshot().matches('following')).toBe(true);
  });

  it('followed to its end once its connection broke on the conversation on screen', () => {
    const { actor, routing, event, told, shown } = chat();
    routing.send({ type: 'OPEN', conversation: conversation(5) });
    actor.send({ type: 'OWN.STARTED', conversationId: 5 });
    event(reply(5, 50, 'Hi'));
    actor.send({ type: 'OWN.LOST', conversationId: 5, content: 'Hi th', model: 'gpt-4o-mini', startedAt: 'x' });
    expect(shown()).toBe('5/50: Hi th');
    event(reply(5, 50, 'Hi there', true));
    expect(actor.getSnapshot().matches('idle')).toBe(true);
    expect(told).toEqual(['appended 5: Hi there']);
  });

  it('not followed when its connection broke on a conversation no longer on screen', () => {
    const { actor, routing, event } = chat();
    routing.send({ type: 'OPEN', conversation: conversation(5) });
    actor.send({ type: 'OWN.STARTED', conversationId: 7 });
    actor.send({ type: 'OWN.LOST', conversationId: 7, content: 'Hi', model: 'gpt-4o-mini', startedAt: 'x' });
    expect(actor.getSnapshot().matches('idle')).toBe(true);
    // It is no longer streaming here: a reply in conversation 5 is another tab's.
    event(reply(5, 50, 'Yo'));
    expect(actor.getSnapshot().matches('following')).toBe(true);
  });
});

describe('Stop on a followed reply', () => {
  it('asks the server to stop the conversation’s reply, and waits for its end', async () => {
    const { actor, routing, stops, loads, settle, clock } = chat();
    routing.send({ type: 'OPEN', conversation: conversation(5, pending(50, 'Hi')) });
    actor.send({ type: 'STOP' });
    expect(stops.map((s) => s.id)).toEqual([5]);
    stops[0]!.resolve({ stopped: true });
    await settle();
    expect(actor.getSnapshot().matches({ following: 'stopAsked' })).toBe(true);
    clock.increment(FOLLOW_QUIET_MS);
    expect(loads.map((l) => l.id)).toEqual([5]);
  });

  it('reads the conversation when nothing was being written any more', async () => {
    const { actor, routing, stops, loads, settle } = chat();
    routing.send({ type: 'OPEN', conversation: conversation(5, pending(50, 'Hi')) });
    actor.send({ type: 'STOP' });
    stops[0]!.resolve({ stopped: false });
    await settle();
    expect(actor.getSnapshot().matches({ following: 'checking' })).toBe(true);
    expect(loads.map((l) => l.id)).toEqual([5]);
  });

  it('says why Stop failed (no answer: the stop text), and Stop tries again', async () => {
    const { actor, routing, stops, told, settle } = chat();
    routing.send({ type: 'OPEN', conversation: conversation(5, pending(50, 'Hi')) });
    actor.send({ type: 'STOP' });
    stops[0]!.reject(new TypeError('Failed to fetch'));
    await settle();
    expect(actor.getSnapshot().matches({ following: 'stopFailed' })).toBe(true);
    expect(actor.getSnapshot().context.problem?.code).toBe('stopReply');
    expect(told).toEqual(['toast stopReply']);
    actor.send({ type: 'STOP' });
    expect(stops).toHaveLength(2);
    expect(actor.getSnapshot().context.problem).toBeNull();
  });
});
