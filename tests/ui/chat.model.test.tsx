// One file: one chart's walk: its table of what each state shows (SPEC) and the steps that drive it
// read side by side.
import { screen, within } from '@testing-library/react';
import { expect, vi } from 'vitest';
import { createActor, type AnyEventObject, type AnyMachineSnapshot, type StateValue } from 'xstate';
import type { Conversation, Message } from '../../src/domain/conversation';
import type { Language } from '../../src/i18n';
import { chatMachine, type ChatContext } from '../../src/machines/chat';
import { chatReplyMachine } from '../../src/machines/chat-reply';
import { chatSendMachine } from '../../src/machines/chat-send';
import { conversationRoutingMachine } from '../../src/machines/conversation-routing';
import { sessionMachine } from '../../src/machines/session';
import { openApp, type OpenApp } from './support/app';
import { FakeApi, json, type StreamWriter } from './support/fake-api';
import { bubbles, input, MODEL_KEY, MODELS, NOT_FOUND, stubScrollIntoView, toastTexts } from './support/fixtures';
import { describeInvariants, describeScreenModel, type Reached, type ScreenModel } from './support/model';

/*
 * The chat page as one chart (src/machines/chat.ts): its parts (the conversation list and
 * route, this tab's message, a reply written elsewhere, the settings) each tell it their
 * changes, and it holds what belongs to the page: whether the input is open, and the hand-over
 * of a first message from chat-send to the list that opens its conversation. Walked on the
 * real screen at /chat with the real parts and API client; our API is faked at fetch, the
 * user's event stream included. An event of this model is a part's change, made to happen on
 * the screen by a gesture or by the server's answer (SPEC section 2 "Chat").
 *
 * Two stories: the first message of a new conversation (created, opened at /chat/9, sent once
 * it has loaded; or the conversation is missing), streamed and stopped; and a conversation
 * opened while its reply is written elsewhere (issue #28 item 5), followed and stopped.
 *
 * | state             | what is asserted                                                            |
 * | ----------------- | --------------------------------------------------------------------------- |
 * | handOver.opening  | /chat/9 open and selected, the message shown and waiting: no stream asked   |
 * | input.locked      | the input disabled or not shown: the lists or a conversation loading (the   |
 * |                   | spinner), this tab's message on its way, a reply followed (Stop offered)    |
 * | input.open        | the input enabled wherever it is shown; no Stop                             |
 * | always            | a POST /llm/conversations per message typed on /chat, a POST .../stream     |
 * |                   | only once its conversation loaded, each Stop to the reply being written     |
 * |                   | (this tab's in 9, the one followed in 5); nothing else reaches a server;    |
 * |                   | only SPEC 8's notifications                                                 |
 */

vi.setConfig({ testTimeout: 60_000 });
stubScrollIntoView();

const EVENTS = '/api/events';
const CREATE = '/llm/conversations';
const ONE = /^\/llm\/conversations\/\d+$/;
const STREAM = /^\/llm\/conversations\/\d+\/stream$/;
const STOP_PATH = /^\/llm\/conversations\/\d+\/stop$/;
const AT = '2026-11-27T09:05:00.000Z';

/** GET /llm/conversations: one conversation, whose reply another tab is writing. */
const SUMMARY = { id: 5, title: 'Recipes', isDeleted: false, createdAt: AT, updatedAt: AT };
const ASKED: Message = {
  id: 51,
  role: 'user',
  content: 'How do I bake bread?',
  model: null,
  tokensUsed: null,
  createdAt: AT,
};
/** GET /llm/conversations/5: the reply in progress (issue #28 item 5: a reload shows it). */
const RECIPES: Conversation = {
  ...SUMMARY,
  messages: [ASKED],
  pendingReply: { requestId: 71, model: 'gpt-4o', content: 'Flour, water', startedAt: AT },
};
/** POST /llm/conversations answers the conversation made for the first message (SPEC 7). */
const CREATED: Conversation = {
  id: 9,
  title: 'New Chat',
  isDeleted: false,
  createdAt: AT,
  updatedAt: AT,
  messages: [],
};
const MESSAGE = 'Hello there';

const TEXT = {
  en: { createOrLoadConversation: 'Failed to create or load conversation' },
  ru: { createOrLoadConversation: 'Не удалось создать или загрузить разговор' },
};

// ---------------------------------------------------------------------------------------
// The parts' changes, as the chart is told them: each part's snapshot in the state a gesture
// or an answer of the server brings it to.

const routingStart = createActor(conversationRoutingMachine).getSnapshot().context;
const sendStart = createActor(chatSendMachine, { input: {} }).getSnapshot().context;
const replyStart = createActor(chatReplyMachine, { input: {} }).getSnapshot().context;

type Conversation9 = 'none' | 'loading' | 'loaded' | 'notFound';
function routingAt(conversation: Conversation9, id: number | null) {
  const current = conversation !== 'loaded' ? null : id === 5 ? RECIPES : CREATED;
  return conversationRoutingMachine.resolveState({
    value: { ready: { conversation, deletion: 'idle', conversationList: 'loaded', modelList: 'loaded' } },
    context: { ...routingStart, models: MODELS.data, conversations: [SUMMARY], targetId: id, current },
  });
}

const exchange = {
  user: { id: -1, role: 'user' as const, content: MESSAGE, model: null, tokensUsed: null, createdAt: AT },
  assistant: { id: -2, role: 'assistant' as const, content: '', model: 'gpt-4o', tokensUsed: null, createdAt: AT },
};
function sendAt(value: StateValue, id: number | null, how: 'pending' | 'done' | 'failed' = 'pending') {
  return chatSendMachine.resolveState({
    value,
    context: {
      ...sendStart,
      conversationId: id,
      model: 'gpt-4o',
      pending: how === 'pending' ? exchange : null,
      failed:
        how === 'failed'
          ? {
              text: MESSAGE,
              problem: { code: 'createOrLoadConversation', message: 'Failed to create or load conversation' },
              conversationId: id,
              kept: false,
            }
          : null,
    },
  });
}

function replyAt(value: StateValue) {
  const following = typeof value === 'object';
  return chatReplyMachine.resolveState({
    value,
    context: {
      ...replyStart,
      shownId: 5,
      follow: following
        ? { conversationId: 5, requestId: 71, model: 'gpt-4o', content: 'Flour, water', startedAt: AT, done: false }
        : null,
      ended: following ? [] : [71],
    },
  });
}

/** How a part's change comes about on the screen (`via`), read by `perform` and the facts. */
type Via =
  | 'lists'
  | 'type'
  | 'created'
  | 'opening'
  | 'opened'
  | 'missing'
  | 'streaming'
  | 'failedOpen'
  | 'stop'
  | 'ended'
  | 'completed'
  | 'open5'
  | 'followed'
  | 'shown5'
  | 'replyStop'
  | 'replyEnded';

const change = (part: 'routing' | 'send' | 'reply', via: Via, snapshot: unknown): AnyEventObject => ({
  type: `xstate.snapshot.${part}`,
  // First, so that a path's title says how each change came about.
  via,
  snapshot,
});
const viaOf = (event: AnyEventObject) => (event as { via?: Via }).via;
const ctx = (snapshot: AnyMachineSnapshot) => snapshot.context as ChatContext;

// ---------------------------------------------------------------------------------------
// The oracle: what the path's gestures and answers established, as SPEC says it counts.

type Phase =
  | 'starting'
  | 'empty'
  | 'creating'
  | 'opening'
  | 'streaming'
  | 'stopping'
  | 'answered'
  | 'notFound'
  | 'loading5'
  | 'following'
  | 'replyStopping'
  | 'followedEnded';

interface Facts {
  phase: Phase;
  address: string;
  creates: number;
  streams: number;
  /** The conversation of each Stop taken. */
  stops: number[];
  toasts: Array<keyof (typeof TEXT)['en']>;
}

function factsOf(events: readonly AnyEventObject[]): Facts {
  const f: Facts = { phase: 'starting', address: '/chat', creates: 0, streams: 0, stops: [], toasts: [] };
  for (const event of events) {
    switch (viaOf(event)) {
      case 'lists':
        f.phase = 'empty';
        break;
      case 'type':
        f.phase = 'creating';
        f.creates += 1;
        break;
      case 'created':
        // SPEC 2: the conversation is created, selected, and its page opened.
        f.phase = 'opening';
        f.address = '/chat/9';
        break;
      case 'opened':
        // SPEC 2: once it has loaded, the message is sent as a streamed message.
        f.phase = 'streaming';
        f.streams += 1;
        break;
      case 'missing':
        // SPEC 8: "Failed to create or load conversation".
        f.phase = 'notFound';
        f.toasts.push('createOrLoadConversation');
        break;
      case 'stop':
        f.phase = 'stopping';
        f.stops.push(9);
        break;
      case 'ended':
      case 'completed':
        f.phase = 'answered';
        break;
      case 'open5':
        f.phase = 'loading5';
        f.address = '/chat/5';
        break;
      case 'followed':
        f.phase = 'following';
        break;
      case 'replyStop':
        f.phase = 'replyStopping';
        f.stops.push(5);
        break;
      case 'replyEnded':
        f.phase = 'followedEnded';
        break;
      // Changes that came with the one before them (the same answer moved two parts).
      case 'opening':
      case 'streaming':
      case 'failedOpen':
      case 'shown5':
      case undefined:
        break;
    }
  }
  return f;
}

const stopButton = () => screen.queryByTestId<HTMLButtonElement>('chat-stop');

/** A reply on its way (SPEC 2): the dots, Stop (disabled once asked), the input disabled. */
function replyShows(stopAsked: boolean) {
  expect(input().disabled).toBe(true);
  expect(screen.getByTestId('ai-sending')).toBeTruthy();
  expect(stopButton()!.disabled).toBe(stopAsked);
}

interface ChatUi extends OpenApp {
  events: StreamWriter;
  own: StreamWriter | null;
  nextEventId: number;
}

export const model: ScreenModel<ChatUi> = {
  machine: chatMachine,
  input: { session: createActor(sessionMachine) },
  events: (snapshot: AnyMachineSnapshot) => {
    const { routing: r, send: s, reply: p } = ctx(snapshot).seen;
    const quiet = s.matches('idle') && p.matches('idle') && s.context.failed === null;
    const at = (conversation: Conversation9, id: number) =>
      r.matches({ ready: { conversation } }) && r.context.targetId === id;
    const events: AnyEventObject[] = [];
    if (r.matches('initialising')) events.push(change('routing', 'lists', routingAt('none', null)));
    if (r.matches({ ready: { conversation: 'none' } }) && quiet) {
      // SPEC 2: the first message on /chat; or a conversation of the list opened.
      events.push(change('send', 'type', sendAt('creating', null)));
      events.push(change('routing', 'open5', routingAt('loading', 5)));
    }
    // SPEC 5: Enter on an empty box sends nothing.
    if (quiet && (r.matches({ ready: { conversation: 'none' } }) || r.matches({ ready: { conversation: 'loaded' } }))) {
      events.push({ type: 'SEND' });
    }
    if (s.matches('creating')) events.push(change('send', 'created', sendAt('waitingForConversation', 9)));
    if (s.matches('waitingForConversation')) {
      if (r.matches({ ready: { conversation: 'none' } }))
        events.push(change('routing', 'opening', routingAt('loading', 9)));
      if (!at('loaded', 9) && !at('notFound', 9)) {
        events.push(change('routing', 'opened', routingAt('loaded', 9)));
        events.push(change('routing', 'missing', routingAt('notFound', 9)));
      }
      if (at('loaded', 9)) events.push(change('send', 'streaming', sendAt({ streaming: 'receiving' }, 9)));
      if (at('notFound', 9)) events.push(change('send', 'failedOpen', sendAt('idle', 9, 'failed')));
    }
    if (s.matches({ streaming: 'receiving' })) {
      events.push(change('send', 'stop', sendAt({ streaming: 'stopping' }, 9)));
      events.push(change('send', 'completed', sendAt('idle', 9, 'done')));
    }
    if (s.matches({ streaming: 'stopping' })) events.push(change('send', 'ended', sendAt('idle', 9, 'done')));
    if (at('loading', 5) && p.matches('idle'))
      events.push(change('reply', 'followed', replyAt({ following: 'watching' })));
    if (at('loading', 5) && p.matches('following')) events.push(change('routing', 'shown5', routingAt('loaded', 5)));
    if (at('loaded', 5) && p.matches({ following: 'watching' })) {
      events.push(change('reply', 'replyStop', replyAt({ following: 'stopping' })));
    }
    if (p.matches({ following: 'stopping' })) events.push(change('reply', 'replyEnded', replyAt('idle')));
    return events;
  },
  serializeState: (snapshot: AnyMachineSnapshot) => {
    const c = ctx(snapshot);
    const { routing: r, send: s, reply: p } = c.seen;
    return JSON.stringify([
      snapshot.value,
      r.value,
      r.context.targetId,
      s.value,
      s.context.conversationId,
      s.context.failed !== null,
      p.value,
      c.awaited,
      c.handedOver,
    ]);
  },
  edgeKey: (before: AnyMachineSnapshot, event: AnyEventObject, after: AnyMachineSnapshot) =>
    JSON.stringify([before.value, event.type, viaOf(event) ?? null, after.value]),
  async open(lang: Language) {
    localStorage.removeItem(MODEL_KEY);
    const api = new FakeApi()
      .hold('GET', '/llm/models')
      .hold('GET', '/llm/conversations')
      .hold('POST', CREATE)
      .hold('GET', ONE)
      .hold('POST', STREAM)
      .hold('POST', STOP_PATH)
      .hold('GET', EVENTS);
    const app = await openApp('/chat', { lang, api });
    // The one event stream of the signed-in app (the queue's), from the server's newest event.
    const { writer } = await api.stream('GET', EVENTS);
    writer.raw('id: 100\nevent: ready\ndata: {}\n\n');
    await screen.findByTestId('chat-loading', {}, { timeout: 15_000 });
    return Object.assign(app, { events: writer, own: null, nextEventId: 101 });
  },
  close: (ui: ChatUi) => ui.close(),
  async perform(ui: ChatUi, event: AnyEventObject) {
    const { api, user } = ui;
    const own = async () => (ui.own ??= (await api.stream('POST', '/llm/conversations/9/stream')).writer);
    if (event.type === 'SEND') {
      input().focus();
      return user.keyboard('{Enter}');
    }
    switch (viaOf(event)) {
      case 'lists':
        await api.answer('GET', '/llm/models', json(MODELS));
        await api.answer('GET', '/llm/conversations', json({ success: true, data: [SUMMARY] }));
        return;
      case 'type':
        await user.type(input(), MESSAGE);
        return user.keyboard('{Enter}');
      case 'created':
        await api.answer('POST', CREATE, json({ success: true, data: CREATED }));
        return;
      case 'opened':
        await api.answer('GET', '/llm/conversations/9', json({ success: true, data: CREATED }));
        return;
      case 'missing':
        await api.answer('GET', '/llm/conversations/9', NOT_FOUND);
        return;
      case 'stop':
      case 'replyStop':
        return user.click(stopButton()!);
      case 'completed': {
        const w = await own();
        w.data({ content: 'Hi!' });
        w.data({ isComplete: true, tokensUsed: 12, balanceAfter: 47, messageId: 31 });
        w.done();
        return;
      }
      case 'ended': {
        // Stopped on the server: [DONE] with no last frame (issue #28 item 5).
        await api.answer('POST', '/llm/conversations/9/stop', json({ success: true, data: { stopped: true } }));
        (await own()).done();
        return;
      }
      case 'open5': {
        const link = screen.getAllByTestId('conversation-link').find((a) => a.getAttribute('href') === '/chat/5');
        return user.click(link!);
      }
      case 'followed':
        await api.answer('GET', '/llm/conversations/5', json({ success: true, data: RECIPES }));
        return;
      case 'replyEnded': {
        await api.answer('POST', '/llm/conversations/5/stop', json({ success: true, data: { stopped: true } }));
        // The end of the reply, stored and billed, as the user's event stream tells it.
        const end = {
          conversationId: 5,
          requestId: 71,
          model: 'gpt-4o',
          content: 'Flour, water',
          done: true,
          message: {
            id: 52,
            role: 'assistant',
            content: 'Flour, water',
            model: 'gpt-4o',
            tokensUsed: 9,
            createdAt: AT,
          },
          balance: 41,
        };
        ui.events.raw(`id: ${ui.nextEventId++}\nevent: reply\ndata: ${JSON.stringify(end)}\n\n`);
        return;
      }
      // The change came with the one before it (the same answer moved two parts).
      case 'opening':
      case 'streaming':
      case 'failedOpen':
      case 'shown5':
      case undefined:
        return;
    }
  },
  always: {
    says: 'SPEC 2: a conversation is created per first message and the message is streamed once it has loaded; Stop reaches the reply being written; nothing else reaches a server; only SPEC 8’s notifications',
    check: (ui: ChatUi, reached: Reached) => {
      const f = factsOf(reached.events);
      expect(ui.api.strays()).toEqual([]);
      expect(ui.location()).toBe(f.address);
      expect(ui.api.sent('POST', CREATE)).toHaveLength(f.creates);
      expect(ui.api.sent('POST', STREAM).map((r) => r.path)).toEqual(
        Array.from({ length: f.streams }, () => '/llm/conversations/9/stream'),
      );
      expect(ui.api.sent('POST', STOP_PATH).map((r) => r.path)).toEqual(
        f.stops.map((id) => `/llm/conversations/${id}/stop`),
      );
      const said = f.toasts.map((key) => TEXT[reached.lang][key]);
      for (const shown of toastTexts()) expect(said).toContain(shown);
    },
  },
  sees: [
    [
      { handOver: 'opening' },
      {
        says: 'SPEC 2: the first message creates a conversation, selects it and opens /chat/{id}; the message waits until it has loaded',
        check: (ui: ChatUi, reached: Reached) => {
          const f = factsOf(reached.events);
          expect(f.phase).toBe('opening');
          expect(bubbles().map((b) => [b.role, b.text])).toEqual([['user', MESSAGE]]);
          expect(ui.api.sent('POST', STREAM)).toHaveLength(0);
          expect(input().disabled).toBe(true);
          expect(screen.getByTestId('chat-send').hasAttribute('disabled')).toBe(true);
        },
      },
    ],
    [
      { input: 'locked' },
      {
        says: 'SPEC 2: the input is disabled while a reply streams or the conversation loads',
        check: (_ui: ChatUi, reached: Reached) => {
          const f = factsOf(reached.events);
          switch (f.phase) {
            case 'starting':
            case 'loading5':
              // SPEC 2: on open the lists load, then the conversation: a spinner, no input.
              expect(screen.getByTestId('chat-loading')).toBeTruthy();
              expect(screen.queryByTestId('chat-input')).toBeNull();
              return;
            case 'creating':
              expect(input().disabled).toBe(true);
              expect(bubbles().map((b) => b.text)).toEqual([MESSAGE]);
              return;
            case 'streaming':
            case 'stopping':
              replyShows(f.phase === 'stopping');
              return;
            case 'following':
            case 'replyStopping':
              // Issue #28 item 5: the reply written elsewhere shows as it is written, with Stop.
              replyShows(f.phase === 'replyStopping');
              expect(bubbles().map((b) => b.text)).toEqual([ASKED.content, 'Flour, water']);
              return;
            case 'notFound':
              // Said, and no input to type in (the page names no conversation it can show).
              expect(screen.getByTestId('conversation-not-found')).toBeTruthy();
              expect(screen.queryByTestId('chat-input')).toBeNull();
              return;
            case 'opening':
            case 'empty':
            case 'answered':
            case 'followedEnded':
              throw new Error(`the input is locked after ${f.phase}`);
          }
        },
      },
    ],
    [
      { input: 'open' },
      {
        says: 'SPEC 2: with no reply streaming and no conversation loading the input box is enabled',
        check: (_ui: ChatUi, reached: Reached) => {
          const f = factsOf(reached.events);
          expect(stopButton()).toBeNull();
          switch (f.phase) {
            case 'empty':
              expect(screen.getByTestId('chat-empty')).toBeTruthy();
              expect(input().disabled).toBe(false);
              return;
            case 'answered':
              expect(bubbles()[0]?.text).toBe(MESSAGE);
              expect(input().disabled).toBe(false);
              return;
            case 'followedEnded':
              expect(bubbles().map((b) => b.text)).toEqual([ASKED.content, 'Flour, water']);
              expect(within(screen.getByTestId('message-list')).queryByTestId('ai-sending')).toBeNull();
              expect(input().disabled).toBe(false);
              return;
            case 'notFound':
              expect(screen.getByTestId('conversation-not-found')).toBeTruthy();
              expect(screen.queryByTestId('chat-input')).toBeNull();
              return;
            case 'starting':
            case 'creating':
            case 'opening':
            case 'streaming':
            case 'stopping':
            case 'loading5':
            case 'following':
            case 'replyStopping':
              throw new Error(`the input is open after ${f.phase}`);
          }
        },
      },
    ],
  ],
};

describeScreenModel('chat page', model);

describeInvariants('chat page', model, [
  {
    name: 'the input is open exactly when no message is on its way, no list or conversation loads and no reply is followed (SPEC 2)',
    state: (s) => {
      const { routing: r, send, reply } = ctx(s).seen;
      const busy =
        !send.matches('idle') ||
        r.matches('initialising') ||
        r.matches({ ready: { conversation: 'loading' } }) ||
        (reply.matches('following') && reply.context.follow?.conversationId === r.context.targetId);
      return s.matches({ input: 'open' }) === !busy;
    },
  },
  {
    name: 'chat-send is told once about its conversation, when it has loaded or cannot be (SPEC 2)',
    step: (before, _event, after) => {
      if (!before.matches({ handOver: 'opening' }) || after.matches({ handOver: 'opening' })) return true;
      const id = ctx(before).awaited;
      const r = ctx(after).seen.routing;
      const settled =
        r.context.targetId === id &&
        (r.matches({ ready: { conversation: 'loaded' } }) || r.matches({ ready: { conversation: 'notFound' } }));
      return settled && ctx(after).handedOver === id && ctx(after).awaited === null;
    },
  },
]);
