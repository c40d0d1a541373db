// One file: one chart's walk: its table of what each state shows (SPEC) and the steps that drive it
// read side by side.
import { cleanup, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AnyEventObject, AnyMachineSnapshot } from 'xstate';
import { ApiError } from '../../src/api/client';
import type { Conversation, Message, PendingReply } from '../../src/domain/conversation';
import type { ReplyEvent } from '../../src/domain/jobs';
import type { Language } from '../../src/i18n';
import { chatReplyMachine, type ChatReplyContext } from '../../src/machines/chat-reply';
import { openApp, type OpenApp } from './support/app';
import { FakeApi, json, type Reply, type StreamWriter } from './support/fake-api';
import {
  authMeBalance,
  BROKEN,
  bubbles,
  bySource,
  input,
  MODEL_KEY,
  MODELS,
  stubScrollIntoView,
  toastTexts,
} from './support/fixtures';
import { describeInvariants, describeScreenModel, replyOf, type Reached, type ScreenModel } from './support/model';

/*
 * Chat replies that survive a reload (issue #28 item 5) walked along the chat-reply
 * statechart on the real chat screen at /chat/9, with the real chat-send, routing and queue
 * actors and the real API client; our API is faked at fetch, the user's event stream
 * (GET /api/events) included, on which the test writes the server's `event: reply` frames
 * (src/domain/jobs.ts replyEventSchema: the whole text so far, `done` with the stored message
 * and the balance).
 *
 * Three replies, as the server writes them: 71 was being written when the page opened (the
 * conversation's pendingReply), 72 is started by another tab of the same person in the
 * conversation on screen, 73 is this tab's own (typed and sent here), whose events must not
 * show it twice, and which is followed once its connection breaks after the first words.
 *
 * What each state shows (the `sees` table below):
 *
 * | state                 | what is asserted                                                               |
 * | --------------------- | ------------------------------------------------------------------------------ |
 * | idle                  | the conversation as the server last said (loaded, read again, each end heard   |
 * |                       | appended once); this tab's own reply streaming if it is (one bubble, not two); |
 * |                       | no reply of elsewhere shown; the input enabled unless this tab streams         |
 * | following.checking    | the reply so far as the streaming message (cursor in it, "AI sending..."); the |
 * |                       | input disabled, Stop offered; GET /llm/conversations/9 waiting                 |
 * | following.watching    | the same, nothing waiting: each event's text shown as it comes                 |
 * | following.stopping    | the same, Stop disabled saying "Stopping…"; POST .../9/stop waiting            |
 * | following.stopAsked   | the same, Stop disabled; nothing waiting                                       |
 * | following.stopFailed  | the same, Stop offered again; the failure said with Retry (SPEC 8 style)       |
 * | always                | the header shows the balance the server last stated (an end's event, or        |
 * |                       | GET /auth/me after an end seen only in the conversation); one event stream;    |
 * |                       | a POST .../stop per Stop taken, a POST .../stream per message sent (none while |
 * |                       | a reply is followed: SPEC 4); nothing reaches a server the app does not call;  |
 * |                       | every notification is one this path gave                                       |
 */

vi.setConfig({ testTimeout: 60_000 });

/** jsdom lays nothing out; the list's scrolling is not this suite's business. */
stubScrollIntoView();

const EVENTS = '/api/events';
const ONE = '/llm/conversations/9';
const STREAM = '/llm/conversations/9/stream';
const STOP_PATH = '/llm/conversations/9/stop';
const START_BALANCE = 50;
const AT = '2026-11-27T09:05:00.000Z';
const SUMMARY = { id: 9, title: 'Monads', isDeleted: false, createdAt: AT, updatedAt: AT };

const userMessage = (id: number, content: string): Message => ({
  id,
  role: 'user',
  content,
  model: null,
  tokensUsed: null,
  createdAt: AT,
});
const assistantMessage = (id: number, content: string): Message => ({
  id,
  role: 'assistant',
  content,
  model: 'gpt-4o',
  tokensUsed: 20,
  createdAt: AT,
});

/** What this tab sends, and the first (and only) chunk of its own stream. */
const OWN_TEXT = 'Tell me more';
const CHUNK = 'Monads wrap values.';

/** The replies as the server writes them: the text at first, later, at the end; the stored message; the balance after. */
const REPLIES = {
  71: {
    user: userMessage(30, 'What is a monad?'),
    first: 'Monads are',
    more: 'Monads are burritos',
    final: 'Monads are burritos.',
    messageId: 40,
    balance: 44,
    stoppedBalance: 46,
  },
  72: {
    user: userMessage(41, 'And functors?'),
    first: 'Functors',
    more: 'Functors map',
    final: 'Functors map values.',
    messageId: 42,
    balance: 41,
    stoppedBalance: 45,
  },
  73: {
    user: userMessage(43, OWN_TEXT),
    first: CHUNK,
    more: `${CHUNK} They chain`,
    final: `${CHUNK} They chain.`,
    messageId: 44,
    balance: 43,
    stoppedBalance: 47,
  },
} as const;
type RequestId = keyof typeof REPLIES;

/** The conversation's reply in progress when the page opens (GET /llm/conversations/9). */
const PENDING_71: PendingReply = { requestId: 71, model: 'gpt-4o', content: REPLIES[71].first, startedAt: AT };

const TEXT = {
  en: {
    sending: 'AI sending...',
    stop: 'Stop',
    stopping: 'Stopping…',
    stopFailed: 'Failed to stop the reply',
    retry: 'Retry',
    header: (n: number) => `${n} ${n === 1 ? 'token' : 'tokens'}`,
  },
  ru: {
    sending: 'ИИ печатает...',
    stop: 'Остановить',
    stopping: 'Останавливаем…',
    stopFailed: 'Не удалось остановить ответ',
    retry: 'Повторить',
    header: (n: number) => {
      const form = new Intl.PluralRules('ru').select(n);
      return `${n} ${form === 'one' ? 'токен' : form === 'few' ? 'токена' : 'токенов'}`;
    },
  },
};

// ---------------------------------------------------------------------------------------
// The server's side, read from where the chart is: the conversation GET answers now.

const ctxOf = (snapshot: AnyMachineSnapshot) => snapshot.context as ChatReplyContext;

/** The request followed: this tab's own reply is 73 before an event named it. */
const followedId = (c: ChatReplyContext): RequestId | null =>
  c.follow ? ((c.follow.requestId ?? 73) as RequestId) : null;

/** The text a reply is stored with: this tab's own, finished here after one chunk, is that chunk. */
function storedText(c: ChatReplyContext, id: RequestId): string {
  if (id === 73 && followedId(c) !== 73 && !c.ended.includes(73)) return CHUNK;
  if (followedId(c) === id && c.follow?.done) return c.follow.content;
  return REPLIES[id].final;
}

/**
 * GET /llm/conversations/9 as the server answers it now: every message stored, in order, and
 * the reply in progress (`pending`: the one followed is still being written).
 */
function conversationNow(c: ChatReplyContext, pending: boolean): Conversation {
  const followed = followedId(c);
  const writing = (id: RequestId) => pending && followed === id;
  const messages: Message[] = [REPLIES[71].user];
  if (!writing(71)) messages.push(assistantMessage(REPLIES[71].messageId, storedText(c, 71)));
  if (followed === 72 || c.ended.includes(72)) {
    messages.push(REPLIES[72].user);
    if (!writing(72)) messages.push(assistantMessage(REPLIES[72].messageId, storedText(c, 72)));
  }
  if (c.own) {
    messages.push(REPLIES[73].user);
    if (!writing(73) && !c.own.active) messages.push(assistantMessage(REPLIES[73].messageId, storedText(c, 73)));
  }
  return {
    ...SUMMARY,
    messages,
    ...(pending && followed
      ? { pendingReply: { requestId: followed, model: 'gpt-4o', content: REPLIES[followed].more, startedAt: AT } }
      : {}),
  };
}

const replyEvent = (id: RequestId, content: string, end?: { balance: number }): ReplyEvent => ({
  conversationId: 9,
  requestId: id,
  model: 'gpt-4o',
  content,
  done: end !== undefined,
  ...(end ? { message: assistantMessage(REPLIES[id].messageId, content), balance: end.balance } : {}),
});

/** How a reply event counts for the oracle (the sample says which of the server's it is). */
type Role = 'start' | 'progress' | 'end' | 'own' | 'ownEnd';
const roleOf = (event: AnyEventObject) => (event as { role?: Role }).role;

type Src = 'loadConversation' | 'stopReply';
const { answered, srcOf } = bySource<Src>();

const brokenError = () => new ApiError('Internal server error', 502);

// ---------------------------------------------------------------------------------------
// What the user has seen happen: the oracle the rows read.

interface Shown {
  /** The stored id (null: a message this tab added itself, not read back). */
  id: number | null;
  role: 'user' | 'assistant';
  text: string;
}

interface Facts {
  phase: 'idle' | 'checking' | 'watching' | 'stopping' | 'stopAsked' | 'stopFailed';
  /** The open conversation's messages as the screen holds them. */
  shown: Shown[];
  /** This tab's own reply while it streams (chat-send's pending exchange). */
  own: { content: string } | null;
  /** The text of the reply followed, as its streaming message shows it. */
  follow: string | null;
  balance: number;
  stops: number;
  stopFailure: boolean;
  /** Messages this tab sent (each a POST .../stream). */
  sends: number;
  /** The last step showed a notification (Stop failed). */
  toast: boolean;
}

function factsOf(events: readonly AnyEventObject[]): Facts {
  const f: Facts = {
    phase: 'idle',
    shown: [],
    own: null,
    follow: null,
    balance: START_BALANCE,
    stops: 0,
    stopFailure: false,
    sends: 0,
    toast: false,
  };
  const read = (conversation: Conversation) => {
    f.shown = conversation.messages.map((m) => ({ id: m.id, role: m.role, text: m.content }));
  };
  const longer = (a: string | null, b: string) => (a !== null && a.length > b.length ? a : b);
  for (const event of events) {
    f.toast = false;
    const e = event as AnyEventObject & { event?: ReplyEvent; balance?: number };
    switch (event.type) {
      case 'CONVERSATION.SHOWN': {
        const conversation = replyOf<{ body: { data: Conversation } }>(event).body.data;
        read(conversation);
        if (conversation.pendingReply) {
          f.follow = conversation.pendingReply.content;
          f.phase = 'watching';
        }
        break;
      }
      case 'REPLY.EVENT': {
        const reply = e.event!;
        switch (roleOf(event)) {
          case 'start':
            f.follow = reply.content;
            f.phase = 'checking';
            if (reply.balance !== undefined) f.balance = reply.balance;
            break;
          case 'progress':
            f.follow = reply.content;
            break;
          case 'end':
            // The queue tells the header the balance of every end it hears.
            f.balance = reply.balance!;
            if (f.phase === 'checking') {
              // Heard while reading: read once more; the stored reply comes with it.
              f.follow = reply.content;
              break;
            }
            if (!f.shown.some((m) => m.id === reply.message!.id)) {
              f.shown.push({ id: reply.message!.id, role: 'assistant', text: reply.message!.content });
            }
            f.follow = null;
            f.phase = 'idle';
            f.stopFailure = false;
            break;
          case 'ownEnd':
            f.balance = reply.balance!;
            break;
          case 'own':
          case undefined:
            // This tab's own reply, streaming here: nothing more to show.
            break;
        }
        break;
      }
      case 'OWN.STARTED':
        f.own = { content: CHUNK };
        f.sends += 1;
        break;
      case 'OWN.FINISHED':
        f.shown.push(
          { id: null, role: 'user', text: OWN_TEXT },
          { id: REPLIES[73].messageId, role: 'assistant', text: CHUNK },
        );
        f.own = null;
        f.balance = REPLIES[73].balance;
        break;
      case 'OWN.LOST':
        // chat-send keeps the message (the server stored it); the reply is followed from here.
        f.shown.push({ id: null, role: 'user', text: OWN_TEXT });
        f.follow = f.own!.content;
        f.own = null;
        f.phase = 'watching';
        break;
      case 'STOP':
        if (f.phase === 'watching' || f.phase === 'checking' || f.phase === 'stopFailed') {
          f.phase = 'stopping';
          f.stops += 1;
          f.stopFailure = false;
        }
        break;
      default:
        if (srcOf(event) === 'loadConversation') {
          if (event.type.startsWith('xstate.error.')) {
            f.phase = 'watching';
            break;
          }
          const conversation = replyOf<{ body: { data: Conversation } }>(event).body.data;
          read(conversation);
          if (conversation.pendingReply) {
            f.follow = longer(f.follow, conversation.pendingReply.content);
            f.phase = 'watching';
          } else {
            // The end seen only in the conversation: the balance is read again (GET /auth/me).
            f.follow = null;
            f.phase = 'idle';
            f.balance = e.balance!;
          }
        } else if (srcOf(event) === 'stopReply') {
          if (event.type.startsWith('xstate.error.')) {
            f.phase = 'stopFailed';
            f.stopFailure = true;
            f.toast = true;
          } else {
            f.phase = (event as unknown as { output: { stopped: boolean } }).output.stopped ? 'stopAsked' : 'checking';
          }
        }
    }
  }
  return f;
}

// ---------------------------------------------------------------------------------------
// The screen.

interface ReplyUi extends OpenApp {
  /** The user's event stream, on which the server's reply events are written. */
  events: StreamWriter;
  nextEventId: number;
  /** This tab's own reply stream, while it is open. */
  own: StreamWriter | null;
  serverBalance: number;
}

/** The conversation, this tab's reply if it streams, then the reply followed (SPEC 2 "Message list"). */
function messagesShow(f: Facts) {
  const expected = f.shown.map(({ role, text }) => ({ role, text }));
  if (f.own) expected.push({ role: 'user', text: OWN_TEXT }, { role: 'assistant', text: f.own.content });
  if (f.follow !== null && f.follow !== '') expected.push({ role: 'assistant', text: f.follow });
  const shown = bubbles();
  expect(shown.map(({ role, text }) => ({ role, text }))).toEqual(expected);
  // SPEC 2: the streaming message shows a blinking cursor; only it does.
  const cursor = screen.queryByTestId('cursor');
  if (f.own || f.follow) expect(shown.at(-1)!.el.contains(cursor)).toBe(true);
  else expect(cursor).toBeNull();
}

/** A reply on its way (here or elsewhere): "AI sending...", the input disabled, Stop in Send's place. */
function replyOnItsWay(f: Facts, lang: Language) {
  const text = TEXT[lang];
  expect(screen.getByTestId('ai-sending').textContent).toBe(text.sending);
  expect(input().disabled).toBe(true);
  expect(screen.queryByTestId('chat-send')).toBeNull();
  const stop = screen.getByTestId<HTMLButtonElement>('chat-stop');
  const asked = f.phase === 'stopping' || f.phase === 'stopAsked';
  expect(stop.disabled).toBe(asked);
  expect(stop.textContent?.trim()).toBe(asked ? text.stopping : text.stop);
}

function followRow(expectHeld: { stop: boolean; conversation: boolean }) {
  return (ui: ReplyUi, reached: Reached) => {
    const f = factsOf(reached.events);
    expect(f.follow).not.toBeNull();
    messagesShow(f);
    replyOnItsWay(f, reached.lang);
    expect(ui.api.isHeld('POST', STOP_PATH), 'a Stop waiting for its answer').toBe(expectHeld.stop);
    expect(ui.api.isHeld('GET', ONE), 'the conversation being read').toBe(expectHeld.conversation);
    expect(screen.queryByTestId('stop-failed')).toBeNull();
  };
}

export const model: ScreenModel<ReplyUi> = {
  machine: chatReplyMachine,
  input: {},
  events: (snapshot: AnyMachineSnapshot) => {
    const c = ctxOf(snapshot);
    const followed = followedId(c);
    if (snapshot.matches('idle')) {
      // The page opens: the conversation, with the reply 71 still being written or not.
      if (c.shownId === null) {
        const stored: Conversation = {
          ...SUMMARY,
          messages: [REPLIES[71].user, assistantMessage(REPLIES[71].messageId, REPLIES[71].final)],
        };
        const writing: Conversation = { ...SUMMARY, messages: [REPLIES[71].user], pendingReply: PENDING_71 };
        return [writing, stored].map((conversation) => ({
          type: 'CONVERSATION.SHOWN',
          conversationId: 9,
          pendingReply: conversation.pendingReply ?? null,
          reply: json({ success: true, data: conversation }),
        }));
      }
      const started72 = c.ended.includes(72);
      return [
        // Another tab sends a message in this conversation (not while this tab has its own).
        ...(!started72 && c.own === null
          ? [
              { type: 'REPLY.EVENT', role: 'start', event: replyEvent(72, REPLIES[72].first) },
              // Its end is the first word heard of it (it stopped before its first word, or the events were late).
              {
                type: 'REPLY.EVENT',
                role: 'start',
                via: 'end',
                event: replyEvent(72, REPLIES[72].final, { balance: REPLIES[72].balance }),
              },
            ]
          : []),
        // This tab sends a message; its stream brings the first words.
        ...(c.own === null && !started72 ? [{ type: 'OWN.STARTED', conversationId: 9 }] : []),
        ...(c.own?.active
          ? [
              // Its own events, on the same event stream: not a second reply.
              ...(c.own.requestId === null ? [{ type: 'REPLY.EVENT', role: 'own', event: replyEvent(73, CHUNK) }] : []),
              { type: 'OWN.FINISHED', conversationId: 9, content: CHUNK },
              // The connection breaks after the first words: the server goes on.
              { type: 'OWN.LOST', conversationId: 9, content: CHUNK, model: 'gpt-4o', startedAt: AT },
            ]
          : []),
        // Its end, heard after the stream's last frame.
        ...(c.own && !c.own.active && c.own.requestId === null && followed === null && !c.ended.includes(73)
          ? [
              {
                type: 'REPLY.EVENT',
                role: 'ownEnd',
                event: replyEvent(73, CHUNK, { balance: REPLIES[73].balance }),
              },
            ]
          : []),
      ];
    }
    // Following a reply.
    const id = followed!;
    const r = REPLIES[id];
    const stopping = snapshot.matches({ following: 'stopping' }) || snapshot.matches({ following: 'stopAsked' });
    const asked = snapshot.matches({ following: 'stopAsked' });
    const ends = asked
      ? // Stopped: stored and billed for what was produced.
        replyEvent(id, c.follow!.content, { balance: r.stoppedBalance })
      : replyEvent(id, r.final, { balance: r.balance });
    return [
      // SPEC 4: no second message while a reply is being written.
      { type: 'SEND', via: 'attempt' },
      ...(c.follow!.content === r.first && !c.follow!.done
        ? [{ type: 'REPLY.EVENT', role: 'progress', event: replyEvent(id, r.more) }]
        : []),
      ...(!c.follow!.done ? [{ type: 'REPLY.EVENT', role: 'end', event: ends }] : []),
      ...(stopping ? [] : [{ type: 'STOP', via: 'button' }]),
      ...(snapshot.matches({ following: 'stopFailed' }) ? [{ type: 'STOP', via: 'retry' }] : []),
      // Read again: still being written (not after its end was heard), or stored; or no answer.
      ...(!c.follow!.done
        ? answered(
            snapshot,
            'loadConversation',
            { output: conversationNow(c, true) },
            json({ success: true, data: conversationNow(c, true) }),
          )
        : []),
      ...answered(
        snapshot,
        'loadConversation',
        { output: conversationNow(c, false) },
        json({ success: true, data: conversationNow(c, false) }),
        { balance: r.balance },
      ),
      ...answered(snapshot, 'loadConversation', { error: brokenError() }, BROKEN),
      // POST .../stop: stopped; nothing in progress any more; a proxy's 502.
      ...answered(
        snapshot,
        'stopReply',
        { output: { stopped: true } },
        json({ success: true, data: { stopped: true } }),
      ),
      ...answered(
        snapshot,
        'stopReply',
        { output: { stopped: false } },
        json({ success: true, data: { stopped: false } }),
      ),
      ...answered(snapshot, 'stopReply', { error: brokenError() }, BROKEN),
    ];
  },
  serializeState: (snapshot: AnyMachineSnapshot) => {
    const c = ctxOf(snapshot);
    return JSON.stringify([
      snapshot.value,
      c.shownId,
      c.follow ? [c.follow.requestId, c.follow.content, c.follow.done] : null,
      c.own ? [c.own.active, c.own.requestId] : null,
      c.ended,
    ]);
  },
  edgeKey: (before: AnyMachineSnapshot, event: AnyEventObject, after: AnyMachineSnapshot) =>
    JSON.stringify([
      before.value,
      event.type.replace(/^(xstate\.(done|error)\.actor)\..*$/, '$1'),
      roleOf(event) ?? (event as { via?: string }).via ?? null,
      // Which reply: the one open at the reload, another tab's, this tab's own.
      followedId(ctxOf(before)) ?? (event as { event?: ReplyEvent }).event?.requestId ?? null,
      (event as { output?: { stopped?: boolean; pendingReply?: unknown } }).output?.stopped ??
        (event as { output?: { pendingReply?: unknown } }).output?.pendingReply !== undefined,
      after.value,
    ]),
  maxSteps: 12,
  async open(lang: Language) {
    localStorage.removeItem(MODEL_KEY);
    const api = new FakeApi()
      .on('GET', '/llm/models', json(MODELS))
      .on('GET', '/llm/conversations', json({ success: true, data: [SUMMARY] }))
      .hold('GET', ONE)
      .hold('POST', STREAM)
      .hold('POST', STOP_PATH)
      .hold('GET', EVENTS);
    const balance = authMeBalance(api, START_BALANCE);
    const app = await openApp('/chat/9', { lang, api });
    // The one event stream of the signed-in app (the queue's), from the server's newest event.
    const { writer } = await api.stream('GET', EVENTS);
    writer.raw('id: 100\nevent: ready\ndata: {}\n\n');
    await screen.findByTestId('chat-loading', {}, { timeout: 15_000 });
    const ui: ReplyUi = Object.assign(app, { events: writer, nextEventId: 101, own: null, serverBalance: 0 });
    return balance.carry(ui);
  },
  close: (ui: ReplyUi) => ui.close(),
  async perform(ui: ReplyUi, event: AnyEventObject) {
    const { api, user } = ui;
    const e = event as AnyEventObject & { event?: ReplyEvent; via?: string; balance?: number };
    switch (event.type) {
      case 'CONVERSATION.SHOWN':
        await api.answerAll('GET', ONE, replyOf<Reply>(event));
        return;
      case 'REPLY.EVENT': {
        if (e.event!.balance !== undefined) ui.serverBalance = e.event!.balance;
        // A frame may arrive in pieces.
        const frame = `id: ${ui.nextEventId++}\nevent: reply\ndata: ${JSON.stringify(e.event)}\n\n`;
        ui.events.raw(frame.slice(0, 25));
        ui.events.raw(frame.slice(25));
        return;
      }
      case 'OWN.STARTED': {
        await user.type(input(), OWN_TEXT);
        await user.keyboard('{Enter}');
        ui.own = (await api.stream('POST', STREAM)).writer;
        ui.own.data({ content: CHUNK });
        return;
      }
      case 'OWN.FINISHED':
        ui.serverBalance = REPLIES[73].balance;
        ui.own!.data({ isComplete: true, tokensUsed: 20, balanceAfter: REPLIES[73].balance, messageId: 44 });
        ui.own!.done();
        ui.own = null;
        return;
      case 'OWN.LOST':
        ui.own!.fail();
        ui.own = null;
        return;
      case 'STOP':
        if (e.via === 'retry') return user.click(screen.getByTestId('stop-retry'));
        return user.click(screen.getByTestId('chat-stop'));
      case 'SEND':
        // SPEC 4: the input is disabled while a reply is written: nothing typed, nothing sent.
        // (A key pressed now would reach the Stop button, which has the focus.)
        expect(input().disabled).toBe(true);
        expect(screen.queryByTestId('chat-send')).toBeNull();
        return;
      default:
        if (srcOf(event) === 'loadConversation') {
          if (e.balance !== undefined) ui.serverBalance = e.balance;
          await api.answer('GET', ONE, replyOf<Reply>(event));
        } else if (srcOf(event) === 'stopReply') {
          await api.answer('POST', STOP_PATH, replyOf<Reply>(event));
        }
    }
  },
  always: {
    says: 'Issue #28 item 5: the header follows each reply’s bill; one event stream for the page; a POST .../stop per Stop taken and a POST .../stream per message sent (none while a reply is written: SPEC 4); nothing else reaches a server',
    check: (ui: ReplyUi, reached: Reached) => {
      const f = factsOf(reached.events);
      expect(screen.getByTestId('token-balance').textContent).toBe(TEXT[reached.lang].header(f.balance));
      expect(ui.api.strays()).toEqual([]);
      expect(ui.api.sent('GET', EVENTS).filter((r) => !r.signal?.aborted)).toHaveLength(1);
      expect(ui.api.sent('POST', STOP_PATH)).toHaveLength(f.stops);
      expect(ui.api.sent('POST', STREAM)).toHaveLength(f.sends);
      expect(ui.api.sent('POST', STREAM).map((r) => r.body)).toEqual(
        Array.from({ length: f.sends }, () => ({
          message: OWN_TEXT,
          model: 'gpt-4o',
          maxTokens: 2000,
          contextTokensLimit: 500,
        })),
      );
      for (const shown of toastTexts()) expect(shown).toBe(TEXT[reached.lang].stopFailed);
    },
  },
  sees: [
    [
      { following: 'checking' },
      {
        says: 'Issue #28 item 5: a reply written elsewhere shows as the streaming message while the conversation is read again (the other tab’s message comes with it)',
        check: followRow({ stop: false, conversation: true }),
      },
    ],
    [
      { following: 'watching' },
      {
        says: 'Issue #28 item 5 and SPEC 2: a reply written elsewhere (a reload’s pendingReply, another tab’s, this tab’s after its connection broke) shows as it grows, with the cursor and "AI sending..."; Stop is offered; no second message',
        check: followRow({ stop: false, conversation: false }),
      },
    ],
    [
      { following: 'stopping' },
      {
        says: 'Issue #28 item 5: Stop asks the server to end the reply (POST .../stop), once',
        check: followRow({ stop: true, conversation: false }),
      },
    ],
    [
      { following: 'stopAsked' },
      {
        says: 'Issue #28 item 5: the server took the Stop; the end (stored, billed for what was produced) is on its way',
        check: followRow({ stop: false, conversation: false }),
      },
    ],
    [
      { following: 'stopFailed' },
      {
        says: 'Issue #28 item 5, SPEC 8: Stop failed: said, with Retry; the reply goes on being shown',
        check: (ui: ReplyUi, reached: Reached) => {
          const f = factsOf(reached.events);
          const text = TEXT[reached.lang];
          expect(f.stopFailure).toBe(true);
          messagesShow(f);
          replyOnItsWay(f, reached.lang);
          const alert = screen.getByTestId('stop-failed');
          expect(alert.getAttribute('role')).toBe('alert');
          expect(within(alert).getByTestId('stop-failed-reason').textContent).toBe(text.stopFailed);
          expect(within(alert).getByTestId('stop-retry').textContent?.trim()).toBe(text.retry);
          // SPEC 8: an error is a notification too.
          if (f.toast) expect(toastTexts()).toContain(text.stopFailed);
          expect(ui.api.isHeld('POST', STOP_PATH)).toBe(false);
        },
      },
    ],
    [
      'idle',
      {
        says: 'SPEC 2, issue #28 item 5: the conversation as stored (each reply heard to its end once); this tab’s own reply streams in one message, its events shown nowhere else; the input free unless this tab streams',
        check: (ui: ReplyUi, reached: Reached) => {
          const f = factsOf(reached.events);
          expect(f.follow).toBeNull();
          if (reached.events.length === 0) {
            // The page opens: the conversation is being read.
            expect(screen.getByTestId('chat-loading')).toBeTruthy();
            return;
          }
          messagesShow(f);
          expect(screen.queryByTestId('stop-failed')).toBeNull();
          if (f.own) {
            expect(screen.getByTestId('ai-sending').textContent).toBe(TEXT[reached.lang].sending);
            expect(input().disabled).toBe(true);
            expect(screen.getByTestId<HTMLButtonElement>('chat-stop').disabled).toBe(false);
          } else {
            expect(screen.queryByTestId('ai-sending')).toBeNull();
            expect(input().disabled).toBe(false);
            expect(screen.queryByTestId('chat-stop')).toBeNull();
            expect(screen.getByTestId('chat-send')).toBeTruthy();
          }
          expect(ui.api.isHeld('GET', ONE)).toBe(false);
        },
      },
    ],
  ],
};

describeScreenModel('chat reply', model);

describeInvariants('chat reply', model, [
  {
    name: 'a reply this tab streams is never followed as one from elsewhere (it would show twice)',
    state: (s) => !s.matches('following') || ctxOf(s).own === null || !ctxOf(s).own!.active,
  },
  {
    name: 'a reply whose end was seen is never followed again',
    state: (s) =>
      !s.matches('following') ||
      ctxOf(s).follow!.requestId === null ||
      !ctxOf(s).ended.includes(ctxOf(s).follow!.requestId!),
  },
  {
    name: 'Stop is asked for once at a time',
    step: (before, event, after) =>
      event.type !== 'STOP' ||
      !(before.matches({ following: 'stopping' }) || before.matches({ following: 'stopAsked' })) ||
      JSON.stringify(before.value) === JSON.stringify(after.value),
  },
]);

describe('chat reply: what the model walk does not reach', () => {
  afterEach(() => cleanup());

  const write = (ui: ReplyUi, event: ReplyEvent) =>
    ui.events.raw(`id: ${ui.nextEventId++}\nevent: reply\ndata: ${JSON.stringify(event)}\n\n`);
  const writing = (content: string): Conversation => ({
    ...SUMMARY,
    messages: [REPLIES[71].user],
    pendingReply: { ...PENDING_71, content },
  });

  it.each(['ru', 'en'] as const)(
    '[%s] leaving the conversation while its reply is written, and coming back to it: shown again as it is by then, followed to its end',
    async (lang) => {
      const ui = await model.open(lang);
      try {
        await ui.api.answerAll('GET', ONE, json({ success: true, data: writing(REPLIES[71].first) }));
        await vi.waitFor(() => expect(bubbles().at(-1)?.text).toBe(REPLIES[71].first));
        // To /chat: the reply goes on without this page; nothing of it is shown there.
        await ui.user.click(screen.getByTestId('new-chat'));
        await screen.findByTestId('chat-empty');
        write(ui, replyEvent(71, REPLIES[71].more));
        expect(screen.queryByTestId('cursor')).toBeNull();
        expect(input().disabled).toBe(false);
        // Back: the conversation says how far the reply is; its events go on from there.
        await ui.user.click(screen.getByTestId('conversation-link'));
        await ui.api.answerAll('GET', ONE, json({ success: true, data: writing(REPLIES[71].more) }));
        await vi.waitFor(() => expect(bubbles().at(-1)?.text).toBe(REPLIES[71].more));
        expect(bubbles().at(-1)!.el.contains(screen.getByTestId('cursor'))).toBe(true);
        expect(input().disabled).toBe(true);
        write(ui, replyEvent(71, REPLIES[71].final, { balance: REPLIES[71].balance }));
        await vi.waitFor(() => expect(screen.queryByTestId('cursor')).toBeNull());
        expect(bubbles().map(({ role, text }) => ({ role, text }))).toEqual([
          { role: 'user', text: REPLIES[71].user.content },
          { role: 'assistant', text: REPLIES[71].final },
        ]);
        // SPEC 2: a finished reply shows its model and time.
        expect(within(bubbles().at(-1)!.el).getByTestId('message-meta').textContent).toMatch(/^GPT-4o · \d{2}:\d{2}$/);
        expect(screen.getByTestId('token-balance').textContent).toBe(TEXT[lang].header(REPLIES[71].balance));
        expect(input().disabled).toBe(false);
      } finally {
        ui.close();
      }
    },
  );

  it('[en] a reply of another conversation is not shown in the one on screen', async () => {
    const ui = await model.open('en');
    try {
      await ui.api.answerAll('GET', ONE, json({ success: true, data: { ...SUMMARY, messages: [REPLIES[71].user] } }));
      await vi.waitFor(() => expect(bubbles()).toHaveLength(1));
      write(ui, { ...replyEvent(72, REPLIES[72].first), conversationId: 10 });
      write(ui, { ...replyEvent(72, REPLIES[72].final, { balance: 30 }), conversationId: 10 });
      // Its bill still reaches the header.
      await vi.waitFor(() => expect(screen.getByTestId('token-balance').textContent).toBe(TEXT.en.header(30)));
      expect(bubbles()).toHaveLength(1);
      expect(screen.queryByTestId('cursor')).toBeNull();
      expect(ui.api.isHeld('GET', ONE)).toBe(false);
    } finally {
      ui.close();
    }
  });
});
