// One file: one chart's walk: its table of what each state shows (SPEC) and the steps that drive it
// read side by side.
import { cleanup, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AnyEventObject, AnyMachineSnapshot } from 'xstate';
import { chatSendMachine, type ChatSendContext } from '../../src/machines/chat-send';
import type { Language } from '../../src/i18n';
import { openApp, signedInUser, type OpenApp } from './support/app';
import { apiError, FakeApi, json, type Reply, type StreamWriter } from './support/fake-api';
import {
  authMeBalance,
  BROKEN,
  bubbles,
  bySource,
  chatApi,
  errorOfReply,
  input,
  MODEL_KEY,
  MODELS,
  NOT_FOUND,
  plural,
  stubScrollIntoView,
  toastTexts,
} from './support/fixtures';
import { describeInvariants, describeScreenModel, replyOf, type Reached, type ScreenModel } from './support/model';

/*
 * Sending a chat message (SPEC section 2 "Chat", section 4 "Chat send", section 5 "Chat",
 * section 7 the stream, section 8 the chat's errors) walked along the chat-send statechart
 * on the real screen: the first message on /chat creates a conversation and opens
 * /chat/{id}, the reply streams in over server-sent events, completes with the model's name,
 * the time and the balance, or fails. What is expected comes from SPEC and is written here;
 * the Russian wording is the product's, written out by hand so a change of it is seen.
 *
 * | state                  | what is asserted                                                             |
 * | ---------------------- | ---------------------------------------------------------------------------- |
 * | creating               | the user's message shown, the input cleared and disabled; POST /llm/         |
 * |                        | conversations with title, message, model and limits                          |
 * | waitingForConversation | /chat/{id} opened, the message waiting (no stream asked for yet)             |
 * | streaming.receiving    | the reply in the assistant message with the cursor, "AI sending...", Stop;   |
 * |                        | the stream asked with message, model, maxTokens 2000, the context limit      |
 * | streaming.stopping     | the same, Stop disabled saying "Stopping…"; POST .../stop waiting (#28)      |
 * | streaming.stopAsked    | the same, Stop disabled; nothing waiting                                     |
 * | streaming.stopFailed   | the same, Stop offered again; why it failed said with Retry, and notified    |
 * | idle                   | the empty state or the messages (a finished reply with model and time, a     |
 * |                        | stopped one with what was produced, a refusal's note); a failure with Retry  |
 * | always                 | the header's balance as the server last stated it (the stream's last frame,  |
 * |                        | GET /auth/me after a stopped reply); one POST .../stop per Stop taken;       |
 * |                        | nothing reaches a server the app does not call; only SPEC 8's notifications  |
 */

vi.setConfig({ testTimeout: 60_000 });

/** jsdom lays nothing out; the list's scrolling (SPEC 2) is recorded instead. */
const scrolls: unknown[] = [];
stubScrollIntoView((options) => scrolls.push(options));

const CREATE = '/llm/conversations';
const ONE = /^\/llm\/conversations\/\d+$/;
const STREAM = /^\/llm\/conversations\/\d+\/stream$/;
/** Issue #28 item 5: Stop asks the server to end the reply, wherever it is written. */
const STOP_PATH = /^\/llm\/conversations\/\d+\/stop$/;
const START_BALANCE = 50;
/** What GET /auth/me says after a stopped reply: the server billed what was produced. */
const BALANCE_AFTER_STOP = 45;

/** POST /llm/conversations answers the conversation made for the first message (SPEC 7). */
const CREATED = {
  id: 9,
  title: 'New Chat',
  isDeleted: false,
  createdAt: new Date().toISOString(),
  updatedAt: new Date().toISOString(),
  messages: [],
};
/** A refused charge states the cost and the balance (SPEC 8: the server's message). */
const REFUSED = apiError(402, 'INSUFFICIENT_TOKENS', 'Insufficient tokens. Need 3 tokens but only have 1', {
  cost: 3,
  balance: 1,
});

/** The text typed: spaces around it (trimmed when sent, SPEC 5) and a second line (Shift+Enter). */
const MESSAGE = '  Monads?\nBriefly.  ';
const CHUNK = 'Monads wrap values.';
/** The stream's last event (SPEC 7): isComplete, tokensUsed and the balance after the charge. */
const COMPLETE = { isComplete: true, tokensUsed: 12, balanceAfter: 47 };

type Reason =
  | 'createConversation'
  | 'createOrLoadConversation'
  | 'sendMessage'
  | 'fallback'
  | 'insufficient'
  | 'unavailable'
  | 'stopReply'
  | 'network';
/** Issue #25 items 6, 7: a reply that is a refusal, was cut at the length limit, or was stopped by the filter. */
type Ending = 'refusal' | 'length' | 'content_filter';
/** How a reply fails on the wire, and the balance it states. */
const FAILURES = {
  // SPEC 8: a stream error with no message shows "Something went wrong :(".
  nomessage: { reason: 'fallback', balance: 49 },
  // SPEC 8: a stream HTTP error shows the server's message.
  refused: { reason: 'insufficient', balance: 1 },
  // The connection breaks before the first words (after them, chat-reply follows the reply:
  // tests/ui/chat-reply.model.test.tsx).
  broken: { reason: 'sendMessage', balance: null },
  // The body ends without [DONE], before the first words.
  cut: { reason: 'fallback', balance: null },
  // Issue #25 item 9: the provider's account is empty; the server says only that chat is unavailable.
  unavailable: { reason: 'unavailable', balance: 48 },
} as const satisfies Record<string, { reason: Reason; balance: number | null }>;
type Failure = keyof typeof FAILURES;

type Src = 'createConversation' | 'stopReply';
/** The answers to an actor of the state, marked with the actor's source (the rows tell them apart). */
const { answered, srcOf } = bySource<Src>();

const TEXT = {
  en: {
    emptyTitle: 'Chat with AI',
    emptyText: 'No conversation selected. Type a message below to start a new chat.',
    sending: 'AI sending...',
    hints: 'Enter to send · Shift+Enter for a new line',
    notSent: 'Not sent: ',
    retry: 'Retry',
    addTokens: 'Add tokens',
    newChat: 'New Chat',
    notFound: 'Conversation not found',
    header: (n: number) => `${n} ${n === 1 ? 'token' : 'tokens'}`,
    // SPEC section 8, word for word.
    reasons: {
      createConversation: 'Failed to create conversation',
      createOrLoadConversation: 'Failed to create or load conversation',
      sendMessage: 'Failed to send message',
      fallback: 'Something went wrong :(',
      insufficient: 'Insufficient tokens. Need 3 tokens but only have 1',
      unavailable: 'Chat is unavailable right now. Please try again later.',
      stopReply: 'Failed to stop the reply',
      network: 'Network error occurred',
    } as Record<Reason, string>,
    stop: 'Stop',
    stopping: 'Stopping…',
    stopFailed: 'Failed to stop the reply',
    // Issue #25: said under the reply.
    endings: {
      refusal: 'The model declined to answer this request.',
      length: 'The reply was cut off at the length limit.',
      content_filter: "The reply was stopped by the provider's filter.",
    } as Record<Ending, string>,
    noModel: 'No model selected. Please select a model in settings.',
    lowBalance: 'Not enough tokens to pay for a reply.',
  },
  ru: {
    emptyTitle: 'Начните разговор с ИИ',
    emptyText: 'Разговоров не выбрано. Напишите сообщение ниже, чтобы начать новый чат.',
    sending: 'ИИ печатает...',
    hints: 'Enter — отправить · Shift+Enter — новая строка',
    notSent: 'Не отправлено: ',
    retry: 'Повторить',
    addTokens: 'Пополнить токены',
    newChat: 'Новый чат',
    notFound: 'Разговор не найден',
    header: (n: number) => `${n} ${plural('ru', n, { one: 'токен', few: 'токена', other: 'токенов' })}`,
    reasons: {
      createConversation: 'Не удалось создать разговор',
      createOrLoadConversation: 'Не удалось создать или загрузить разговор',
      sendMessage: 'Не удалось отправить сообщение',
      fallback: 'Что-то пошло не так :(',
      insufficient: 'Недостаточно токенов: нужно 3 токена, а у вас только 1',
      unavailable: 'Чат сейчас недоступен. Попробуйте позже.',
      stopReply: 'Не удалось остановить ответ',
      network: 'Ошибка сети',
    } as Record<Reason, string>,
    stop: 'Остановить',
    stopping: 'Останавливаем…',
    stopFailed: 'Не удалось остановить ответ',
    endings: {
      refusal: 'Модель отказалась отвечать на этот запрос.',
      length: 'Ответ обрезан: достигнут предел длины ответа.',
      content_filter: 'Ответ остановлен фильтром провайдера.',
    } as Record<Ending, string>,
    noModel: 'Модель не выбрана. Выберите модель в настройках.',
    lowBalance: 'Недостаточно токенов, чтобы оплатить ответ.',
  },
};

/** The app, plus what the test keeps between steps: the reply being written and when each send happened. */
interface ChatUi extends OpenApp {
  writer: StreamWriter | null;
  /** For every Send and Retry gesture, the minute it happened (before and after it), as HH:MM. */
  sends: Array<[string, string]>;
  serverBalance: number;
  nextMessageId: number;
}

const hhmm = (d: Date) => `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;

interface Shown {
  role: 'user' | 'assistant';
  text: string;
  /** Index of the Send gesture it came from (its time is that gesture's), for a finished reply. */
  send: number | null;
  /** Why a finished reply ended early, as the server said on its last event. */
  ending?: Ending;
}

/** What the user has done and the server said, as SPEC says it counts: the oracle the rows read. */
type Phase = 'idle' | 'creating' | 'waiting' | 'streaming' | 'stopping' | 'stopAsked' | 'stopFailed';
/** The phases in which a reply arrives (Stop in place of Send). */
const STREAMING: readonly Phase[] = ['streaming', 'stopping', 'stopAsked', 'stopFailed'];

interface Facts {
  phase: Phase;
  /** The conversation made for the first message, once the server made it. */
  conversation: number | null;
  /** It could not be opened: the page says "conversation not found". */
  lost: boolean;
  /** The messages of the open conversation on screen (the pending exchange not included). */
  messages: Shown[];
  pending: { text: string; content: string; send: number } | null;
  draft: string;
  failed: { text: string; reason: Reason; kept: boolean; where: number | null } | null;
  balance: number;
  /** The notification of the last step, and of the whole path (SPEC 8). */
  toast: Reason | null;
  toasts: Reason[];
  /** Chunks arrived in the current reply. */
  chunks: number;
  /** Stop gestures the server was asked for (POST .../stop), and why the last one failed. */
  stops: number;
  stopFailure: Reason | null;
}

function factsOf(events: readonly AnyEventObject[]): Facts {
  const f: Facts = {
    phase: 'idle',
    conversation: null,
    lost: false,
    messages: [],
    pending: null,
    draft: '',
    failed: null,
    balance: START_BALANCE,
    toast: null,
    toasts: [],
    chunks: 0,
    stops: 0,
    stopFailure: null,
  };
  let sends = 0;
  const fail = (reason: Reason) => {
    const text = f.pending?.text ?? '';
    const kept = (f.pending?.content ?? '') !== '';
    // SPEC 4: the placeholder assistant message goes; the server kept the user's message when
    // part of the reply had arrived. Nothing typed is lost: the text is back in the input.
    if (kept) f.messages.push({ role: 'user', text, send: null });
    f.failed = { text, reason, kept, where: f.conversation };
    if (f.draft.trim() === '') f.draft = text;
    f.pending = null;
    f.phase = 'idle';
    f.stopFailure = null;
    f.toast = reason;
    f.toasts.push(reason);
  };
  for (const event of events) {
    f.toast = null;
    switch (event.type) {
      case 'DRAFT.CHANGE':
        if (f.phase === 'idle') f.draft = (event as unknown as { text: string }).text;
        break;
      case 'SEND':
      case 'RETRY': {
        const send = sends;
        sends += 1;
        if (f.phase !== 'idle') break;
        if (event.type === 'RETRY') {
          if (!f.failed) break;
          f.draft = f.failed.text;
        }
        // SPEC 5: the text is trimmed; an empty message is not sent.
        if (f.draft.trim() === '') break;
        f.pending = { text: f.draft.trim(), content: '', send };
        f.draft = '';
        f.failed = null;
        f.chunks = 0;
        f.phase = f.conversation === null ? 'creating' : 'streaming';
        break;
      }
      case 'CONVERSATION.READY':
        f.phase = 'streaming';
        break;
      case 'CONVERSATION.FAILED':
        fail('createOrLoadConversation');
        f.lost = true;
        break;
      case 'STREAM.CHUNK':
        f.pending!.content += CHUNK;
        f.chunks += 1;
        break;
      case 'STREAM.COMPLETE': {
        const ending = (event as unknown as { ending?: Ending }).ending;
        f.messages.push(
          { role: 'user', text: f.pending!.text, send: null },
          { role: 'assistant', text: f.pending!.content, send: f.pending!.send, ...(ending ? { ending } : {}) },
        );
        f.pending = null;
        f.balance = COMPLETE.balanceAfter;
        f.phase = 'idle';
        f.stopFailure = null;
        break;
      }
      case 'STREAM.ERROR': {
        const failure = FAILURES[(event as unknown as { via: Failure }).via];
        fail(failure.reason);
        if (failure.balance !== null) f.balance = failure.balance;
        break;
      }
      case 'STREAM.LOST':
        // Sampled here only before the first words: the server stopped the reply.
        fail(FAILURES[(event as unknown as { via: Failure }).via].reason);
        break;
      case 'STOP':
        // Issue #28 item 5: the server is asked to end the reply; once asked, not again.
        if (f.phase === 'streaming' || f.phase === 'stopFailed') {
          f.phase = 'stopping';
          f.stops += 1;
          f.stopFailure = null;
        }
        break;
      case 'STREAM.ENDED':
        // Stopped: the partial reply stays (the server stored it and billed what was produced,
        // which GET /auth/me then says).
        f.messages.push({ role: 'user', text: f.pending!.text, send: null });
        if (f.pending!.content !== '') {
          f.messages.push({ role: 'assistant', text: f.pending!.content, send: f.pending!.send });
        }
        f.pending = null;
        f.phase = 'idle';
        f.stopFailure = null;
        f.balance = BALANCE_AFTER_STOP;
        break;
      default:
        if (srcOf(event) === 'createConversation') {
          if (event.type.startsWith('xstate.done.')) {
            f.conversation = CREATED.id;
            f.phase = 'waiting';
          } else if (replyOf<Reply>(event).status === 402) {
            fail('insufficient');
            f.balance = 1;
          } else {
            fail('createConversation');
          }
        } else if (srcOf(event) === 'stopReply') {
          if (event.type.startsWith('xstate.done.')) f.phase = 'stopAsked';
          else {
            const reason: Reason = replyOf<Reply | null>(event) === null ? 'network' : 'stopReply';
            f.phase = 'stopFailed';
            f.stopFailure = reason;
            f.toast = reason;
            f.toasts.push(reason);
          }
        }
    }
  }
  return f;
}

/** The messages of the open conversation and the pending exchange, in order (SPEC 2 "Message list"). */
function messagesShow(ui: ChatUi, f: Facts, lang: Language) {
  const expected: Array<{ role: string; text: string }> = f.messages.map(({ role, text }) => ({ role, text }));
  if (f.pending) {
    // SPEC 4: the user's message and the assistant's message that the stream fills.
    expected.push({ role: 'user', text: f.pending.text });
    if (f.pending.content !== '') expected.push({ role: 'assistant', text: f.pending.content });
  }
  const shown = bubbles();
  expect(shown.map(({ role, text }) => ({ role, text }))).toEqual(expected);
  // SPEC 2: when not streaming, a reply shows the model's name and the time (HH:MM).
  f.messages.forEach((m, i) => {
    if (m.role !== 'assistant') return;
    const meta = within(shown[i]!.el).getByTestId('message-meta').textContent;
    expect(ui.sends[m.send!]!.map((time) => `GPT-4o · ${time}`)).toContain(meta);
    // Issue #25: a refusal, a cut-off or a filtered reply says so under it, in the user's language.
    const note = within(shown[i]!.el).queryByTestId('message-ending');
    expect(note?.textContent ?? null).toBe(m.ending ? TEXT[lang].endings[m.ending] : null);
  });
  const failed = screen.queryByTestId('failed-message');
  if (f.failed && f.failed.where === f.conversation && !f.lost) {
    const text = TEXT[lang];
    const reason = text.reasons[f.failed.reason];
    // The message that could not be sent is marked, says why, and offers Retry.
    expect(within(failed!).getByRole('alert').querySelector('p')?.textContent).toBe(
      f.failed.kept ? reason : `${text.notSent}${reason}`,
    );
    if (!f.failed.kept) expect(failed!.querySelector('p')?.textContent).toBe(f.failed.text);
    expect(within(failed!).getByTestId('chat-retry').textContent?.trim()).toBe(text.retry);
    const billing = within(failed!).queryByTestId('failed-billing');
    expect(billing?.textContent ?? null).toBe(f.failed.reason === 'insufficient' ? text.addTokens : null);
  } else {
    expect(failed).toBeNull();
  }
}

/** The input area (SPEC 2 "Input area"). */
function inputShows(f: Facts, lang: Language, enabled: boolean) {
  expect(input().disabled).toBe(!enabled);
  expect(input().value).toBe(f.draft);
  // SPEC 2/9: it grows up to 120 pixels; after sending its height is reset.
  expect(input().style.maxHeight).toBe('120px');
  if (f.draft === '') expect(input().style.height).toBe('');
  expect(document.getElementById('chat-hints')?.textContent).toBe(TEXT[lang].hints);
  if (STREAMING.includes(f.phase)) {
    expect(screen.queryByTestId('chat-send')).toBeNull();
    // Issue #28 item 5: once Stop was asked for it waits for the reply's end, and is not asked twice.
    const stop = screen.getByTestId<HTMLButtonElement>('chat-stop');
    const asked = f.phase === 'stopping' || f.phase === 'stopAsked';
    expect(stop.disabled).toBe(asked);
    expect(stop.textContent?.trim()).toBe(asked ? TEXT[lang].stopping : TEXT[lang].stop);
  } else {
    // Send is enabled only with trimmed non-empty text and the input not disabled.
    expect(screen.getByTestId<HTMLButtonElement>('chat-send').disabled).toBe(!(enabled && f.draft.trim() !== ''));
  }
}

function addressShows(ui: ChatUi, f: Facts) {
  // SPEC 2: the first message navigates to /chat/{id}.
  expect(ui.location()).toBe(f.conversation === null ? '/chat' : `/chat/${f.conversation}`);
  const links = screen.queryAllByTestId('conversation-link').map((a) => a.getAttribute('href'));
  expect(links).toEqual(f.conversation === null ? [] : [`/chat/${f.conversation}`]);
}

function sending(lang: Language, shown: boolean) {
  const dots = screen.queryByTestId('ai-sending');
  expect(dots?.textContent ?? null).toBe(shown ? TEXT[lang].sending : null);
}

/** A reply on its way (SPEC 2/4/7): in the assistant message with a cursor, "AI sending...", the input disabled. */
function replyStreams(ui: ChatUi, f: Facts, lang: Language) {
  addressShows(ui, f);
  messagesShow(ui, f, lang);
  inputShows(f, lang, false);
  sending(lang, true);
  const cursor = screen.queryByTestId('cursor');
  if (f.pending!.content !== '') {
    expect(bubbles().at(-1)!.el.contains(cursor)).toBe(true);
    // SPEC 2: scrolled smoothly as streamed text grows.
    expect(scrolls.at(-1)).toEqual({ behavior: 'smooth', block: 'end' });
  } else {
    expect(cursor).toBeNull();
  }
  const request = ui.api.sent('POST', STREAM).at(-1)!;
  expect(request.path).toBe(`/llm/conversations/${f.conversation}/stream`);
  expect(request.body).toEqual({
    message: f.pending!.text,
    model: 'gpt-4o',
    maxTokens: 2000,
    contextTokensLimit: 500,
  });
}

export const model: ScreenModel<ChatUi> = {
  machine: chatSendMachine,
  input: {},
  events: (snapshot: AnyMachineSnapshot) => {
    const c = snapshot.context as ChatSendContext;
    const idle = snapshot.matches('idle');
    // The conversation made for the message could not be opened: the page says it is not
    // found, with no input; only leaving the page goes on (another chart's business).
    if (idle && c.failed?.problem.code === 'createOrLoadConversation') return [];
    const fields = {
      model: 'gpt-4o',
      contextTokensLimit: 500,
      conversationId: c.conversationId,
      disabled: !idle,
      balance: START_BALANCE,
      sentAt: '2026-11-21T10:00:00.000Z',
    };
    if (!idle) {
      const receiving = snapshot.matches({ streaming: 'receiving' });
      const streaming = snapshot.matches('streaming');
      const empty = (c.pending?.assistant.content ?? '') === '';
      const lost = (via: 'broken' | 'cut') => ({
        type: 'STREAM.LOST',
        via,
        problem:
          via === 'broken'
            ? { code: 'sendMessage', message: 'Failed to send message' }
            : { code: 'streamErrorFallback', message: 'Something went wrong :(' },
      });
      return [
        // The input is disabled while a reply is on its way: nothing typed, nothing sent.
        { type: 'DRAFT.CHANGE', text: MESSAGE },
        { type: 'SEND', via: 'enter', ...fields },
        ...(streaming
          ? [
              { type: 'STREAM.CHUNK', content: CHUNK },
              { type: 'STREAM.COMPLETE', tokensUsed: COMPLETE.tokensUsed, balanceAfter: COMPLETE.balanceAfter },
              // Stopped on the server (here or from another tab): [DONE] with no last frame.
              { type: 'STREAM.ENDED' },
              {
                type: 'STREAM.ERROR',
                via: 'nomessage',
                problem: { code: 'INTERNAL', message: 'Something went wrong :(' },
                balanceAfter: FAILURES.nomessage.balance,
              },
              // Before the first words a lost connection is a failure; after them the reply goes on.
              ...(empty ? [lost('broken')] : []),
              // Stop, and once asked (its button disabled) not again; Retry after a refusal.
              { type: 'STOP', via: 'button' },
              ...(snapshot.matches({ streaming: 'stopFailed' }) ? [{ type: 'STOP', via: 'retry' }] : []),
            ]
          : []),
        ...(receiving
          ? [
              // Issue #25: the text that came is a refusal, or was cut at the length limit; the
              // filter may stop a reply before any text.
              ...(empty ? (['content_filter'] as const) : (['refusal', 'length'] as const)).map((ending) => ({
                type: 'STREAM.COMPLETE',
                via: ending,
                ending,
                tokensUsed: COMPLETE.tokensUsed,
                balanceAfter: COMPLETE.balanceAfter,
              })),
              // An HTTP refusal comes before any of the reply; so does an empty provider account.
              ...(empty
                ? [
                    {
                      type: 'STREAM.ERROR',
                      via: 'unavailable',
                      problem: {
                        code: 'CHAT_UNAVAILABLE',
                        message: 'Chat is unavailable right now. Please try again later.',
                      },
                      balanceAfter: FAILURES.unavailable.balance,
                    },
                    {
                      type: 'STREAM.ERROR',
                      via: 'refused',
                      problem: {
                        code: 'INSUFFICIENT_TOKENS',
                        message: 'Insufficient tokens. Need 3 tokens but only have 1',
                        details: { cost: 3, balance: 1 },
                      },
                    },
                    lost('cut'),
                  ]
                : []),
            ]
          : []),
        ...(snapshot.matches('waitingForConversation')
          ? [{ type: 'CONVERSATION.READY' }, { type: 'CONVERSATION.FAILED' }]
          : []),
        ...answered(snapshot, 'createConversation', { output: CREATED }, json({ success: true, data: CREATED })),
        ...answered(snapshot, 'createConversation', { error: errorOfReply(BROKEN) }, BROKEN),
        // The server refuses to create a conversation for a message no balance can pay for.
        ...answered(snapshot, 'createConversation', { error: errorOfReply(REFUSED) }, REFUSED),
        // POST .../stop: asked; a proxy's 502; no answer at all (null: the connection breaks).
        ...answered(
          snapshot,
          'stopReply',
          { output: { stopped: true } },
          json({ success: true, data: { stopped: true } }),
        ),
        ...answered(snapshot, 'stopReply', { error: errorOfReply(BROKEN) }, BROKEN),
        ...answered(snapshot, 'stopReply', { error: new TypeError('Failed to fetch') }, null),
      ];
    }
    return [
      { type: 'DRAFT.CHANGE', text: MESSAGE },
      { type: 'DRAFT.CHANGE', text: '   ' },
      // SPEC 2: Enter sends; so does the send button.
      { type: 'SEND', via: 'enter', ...fields },
      { type: 'SEND', via: 'click', ...fields },
      ...(c.failed ? [{ type: 'RETRY', ...fields, conversationId: c.failed.conversationId }] : []),
    ];
  },
  serializeState: (snapshot: AnyMachineSnapshot) => {
    const c = snapshot.context as ChatSendContext;
    return JSON.stringify([
      snapshot.value,
      c.draft.trim() === '',
      c.conversationId,
      c.pending ? c.pending.assistant.content !== '' : null,
      c.failed ? [c.failed.problem.code, c.failed.kept] : null,
    ]);
  },
  // SPEC tells apart: a first message from a later one, each way a reply fails (its own
  // text), a blank text from a real one, Enter from the button.
  edgeKey: (before: AnyMachineSnapshot, event: AnyEventObject, after: AnyMachineSnapshot) => {
    const b = before.context as ChatSendContext;
    const a = after.context as ChatSendContext;
    const sample =
      (event as { via?: string }).via ??
      (event.type === 'DRAFT.CHANGE' ? (event as { text?: string }).text?.trim() === '' : null);
    const moved = JSON.stringify(before.value) !== JSON.stringify(after.value);
    return JSON.stringify([
      before.value,
      event.type.replace(/^(xstate\.(done|error)\.actor)\..*$/, '$1'),
      sample,
      event.type === 'SEND' || event.type === 'RETRY' ? [b.conversationId !== null, b.draft.trim() === ''] : null,
      // Stopped or failed before or after part of the reply arrived.
      event.type === 'STOP' || event.type === 'STREAM.ERROR' ? (b.pending?.assistant.content ?? '') !== '' : null,
      after.value,
      moved && a.failed ? [a.failed.problem.code, a.failed.kept] : null,
    ]);
  },
  open: async (lang: Language) => {
    localStorage.removeItem(MODEL_KEY);
    scrolls.length = 0;
    const api = chatApi().hold('POST', CREATE).hold('GET', ONE).hold('POST', STREAM).hold('POST', STOP_PATH);
    const balance = authMeBalance(api, START_BALANCE);
    const app = await openApp('/chat', { lang, api });
    await screen.findByTestId('chat-empty', {}, { timeout: 15_000 });
    const ui: ChatUi = Object.assign(app, { writer: null, sends: [], serverBalance: 0, nextMessageId: 30 });
    return balance.carry(ui);
  },
  close: (ui: ChatUi) => ui.close(),
  async perform(ui: ChatUi, event: AnyEventObject, before: AnyMachineSnapshot) {
    const { user, api } = ui;
    const idle = before.matches('idle');
    const writer = async () => (ui.writer ??= (await api.stream('POST', STREAM)).writer);
    const finish = () => {
      ui.writer = null;
    };
    switch (event.type) {
      case 'DRAFT.CHANGE': {
        // SPEC 2: the input is disabled while a reply streams or the conversation loads.
        if (!idle) return expect(input().disabled).toBe(true);
        await user.clear(input());
        const text = (event as unknown as { text: string }).text;
        // SPEC 2: Shift+Enter adds a newline (and does not send).
        return user.type(input(), text.replace(/\n/g, '{Shift>}{Enter}{/Shift}'));
      }
      case 'SEND':
      case 'RETRY': {
        const at = hhmm(new Date());
        if (!idle) {
          ui.sends.push([at, at]);
          expect(input().disabled).toBe(true);
          return expect(screen.queryByTestId<HTMLButtonElement>('chat-send')?.disabled ?? true).toBe(true);
        }
        if (event.type === 'RETRY') await user.click(screen.getByTestId('chat-retry'));
        else if ((event as unknown as { via: string }).via === 'click')
          await user.click(screen.getByTestId('chat-send'));
        else {
          input().focus();
          await user.keyboard('{Enter}');
        }
        ui.sends.push([at, hhmm(new Date())]);
        return;
      }
      case 'STOP': {
        if (before.matches({ streaming: 'stopping' }) || before.matches({ streaming: 'stopAsked' })) {
          return expect(screen.getByTestId<HTMLButtonElement>('chat-stop').disabled).toBe(true);
        }
        if ((event as unknown as { via: string }).via === 'retry') return user.click(screen.getByTestId('stop-retry'));
        return user.click(screen.getByTestId('chat-stop'));
      }
      case 'STREAM.ENDED': {
        // The server stopped the reply, stored and billed it, then wrote [DONE] with no last frame.
        const w = await writer();
        ui.serverBalance = BALANCE_AFTER_STOP;
        w.done();
        return finish();
      }
      case 'STREAM.LOST': {
        const w = await writer();
        if ((event as unknown as { via: Failure }).via === 'broken') w.fail();
        else w.end();
        return finish();
      }
      case 'STREAM.CHUNK': {
        const fresh = ui.writer === null;
        const w = await writer();
        if (fresh) {
          // SPEC 7: comments and lines that cannot be parsed are ignored.
          w.raw(': keep-alive\n\n');
          w.raw('data: {not json\n\n');
        }
        return w.data({ content: CHUNK });
      }
      case 'STREAM.COMPLETE': {
        const w = await writer();
        const ending = (event as unknown as { ending?: Ending }).ending;
        w.data({ ...COMPLETE, messageId: (ui.nextMessageId += 1), ...(ending ? { ending } : {}) });
        w.done();
        return finish();
      }
      case 'STREAM.ERROR': {
        const via = (event as unknown as { via: Failure }).via;
        if (via === 'refused') {
          await api.answer('POST', STREAM, REFUSED);
          return finish();
        }
        const w = await writer();
        if (via === 'unavailable') {
          // The server's frame for 429 insufficient_quota (tests/server/chat/stream.test.ts).
          w.data({
            error: 'unavailable',
            message: 'Chat is unavailable right now. Please try again later.',
            billing: { inputTokens: 0, outputTokens: 0, cost: 0 },
            balanceAfter: FAILURES.unavailable.balance,
          });
          w.done();
        } else {
          // The server's failure frame (SPEC 7: error, message) with no message, then [DONE].
          w.data({ error: 'INTERNAL', balanceAfter: FAILURES.nomessage.balance });
          w.done();
        }
        return finish();
      }
      case 'CONVERSATION.READY':
        await api.answer('GET', `/llm/conversations/${CREATED.id}`, json({ success: true, data: CREATED }));
        return;
      case 'CONVERSATION.FAILED':
        await api.answer('GET', `/llm/conversations/${CREATED.id}`, NOT_FOUND);
        return;
      default:
        if (srcOf(event) === 'createConversation') {
          await api.answer('POST', CREATE, replyOf<Reply>(event));
        } else if (srcOf(event) === 'stopReply') {
          const reply = replyOf<Reply | null>(event);
          if (reply === null) await api.breakConnection('POST', STOP_PATH);
          else await api.answer('POST', STOP_PATH, reply);
        }
    }
  },
  always: {
    says: 'SPEC 4/7: the header shows the balance the server last stated; nothing reaches a server the app did not mean; every notification is one SPEC 8 gives for what happened',
    check: (ui: ChatUi, reached: Reached) => {
      const f = factsOf(reached.events);
      expect(screen.getByTestId('token-balance').textContent).toBe(TEXT[reached.lang].header(f.balance));
      expect(ui.api.strays()).toEqual([]);
      // Issue #28 item 5: each Stop taken is one POST /llm/conversations/{id}/stop, for the conversation.
      const stops = ui.api.sent('POST', STOP_PATH);
      expect(stops.map((r) => r.path)).toEqual(
        Array.from({ length: f.stops }, () => `/llm/conversations/${f.conversation}/stop`),
      );
      const said = f.toasts.map((r) => TEXT[reached.lang].reasons[r]);
      for (const shown of toastTexts()) expect(said).toContain(shown);
      if (f.toast) expect(toastTexts()).toContain(TEXT[reached.lang].reasons[f.toast]);
    },
  },
  sees: [
    [
      'creating',
      {
        says: 'SPEC 2/4: the first message creates a conversation: the user’s message is shown, the input is cleared and disabled',
        check: (ui: ChatUi, reached: Reached) => {
          const f = factsOf(reached.events);
          addressShows(ui, f);
          messagesShow(ui, f, reached.lang);
          inputShows(f, reached.lang, false);
          // SPEC 7: POST /llm/conversations with a title; the message, model and limits go with
          // it, so the server can refuse one that no balance pays for before creating anything.
          expect(ui.api.sent('POST', CREATE).at(-1)?.body).toEqual({
            title: 'New Chat',
            message: f.pending!.text,
            model: 'gpt-4o',
            contextTokensLimit: 500,
            maxTokens: 2000,
          });
        },
      },
    ],
    [
      'waitingForConversation',
      {
        says: 'SPEC 2: the new conversation is selected and /chat/{id} opened; the message waits until it has loaded',
        check: (ui: ChatUi, reached: Reached) => {
          const f = factsOf(reached.events);
          addressShows(ui, f);
          messagesShow(ui, f, reached.lang);
          inputShows(f, reached.lang, false);
          expect(ui.api.sent('POST', STREAM)).toHaveLength(0);
        },
      },
    ],
    [
      { streaming: 'stopping' },
      {
        says: 'Issue #28 item 5: Stop asks the server to end the reply (POST .../stop); the reply goes on arriving meanwhile, Stop is not offered twice',
        check: (ui: ChatUi, reached: Reached) => {
          const f = factsOf(reached.events);
          expect(f.phase).toBe('stopping');
          replyStreams(ui, f, reached.lang);
          expect(ui.api.isHeld('POST', STOP_PATH)).toBe(true);
          expect(screen.queryByTestId('stop-failed')).toBeNull();
        },
      },
    ],
    [
      { streaming: 'stopAsked' },
      {
        says: 'Issue #28 item 5: the server took the Stop; its last words and the end are on their way',
        check: (ui: ChatUi, reached: Reached) => {
          const f = factsOf(reached.events);
          expect(f.phase).toBe('stopAsked');
          replyStreams(ui, f, reached.lang);
          expect(ui.api.isHeld('POST', STOP_PATH)).toBe(false);
          expect(screen.queryByTestId('stop-failed')).toBeNull();
        },
      },
    ],
    [
      { streaming: 'stopFailed' },
      {
        says: 'Issue #28 item 5 and SPEC 8: Stop failed: said (the server’s reason, else "failed to stop the reply"), with Retry; the reply goes on',
        check: (ui: ChatUi, reached: Reached) => {
          const f = factsOf(reached.events);
          const text = TEXT[reached.lang];
          expect(f.phase).toBe('stopFailed');
          replyStreams(ui, f, reached.lang);
          const alert = screen.getByTestId('stop-failed');
          expect(alert.getAttribute('role')).toBe('alert');
          expect(within(alert).getByTestId('stop-failed-reason').textContent).toBe(
            f.stopFailure === 'stopReply' ? text.stopFailed : `${text.stopFailed}: ${text.reasons[f.stopFailure!]}`,
          );
          expect(within(alert).getByTestId('stop-retry').textContent?.trim()).toBe(text.retry);
        },
      },
    ],
    [
      'streaming',
      {
        says: 'SPEC 2/4/7: the reply streams into the assistant message with a cursor; "AI sending..."; the input disabled; the request carries message, model, maxTokens 2000 and the context limit',
        check: (ui: ChatUi, reached: Reached) => {
          const f = factsOf(reached.events);
          expect(f.phase).toBe('streaming');
          replyStreams(ui, f, reached.lang);
          expect(screen.queryByTestId('stop-failed')).toBeNull();
        },
      },
    ],
    [
      'idle',
      {
        says: 'SPEC 2: no conversation: the empty state and the input; else the messages (a finished reply with model name and time) and the input; a failure is shown (SPEC 4/8)',
        check: (ui: ChatUi, reached: Reached) => {
          const f = factsOf(reached.events);
          const text = TEXT[reached.lang];
          addressShows(ui, f);
          if (f.lost) {
            // The conversation made could not be opened.
            expect(screen.getByTestId('conversation-not-found').querySelector('h2')?.textContent).toBe(text.notFound);
            expect(screen.queryByTestId('chat-input')).toBeNull();
            return;
          }
          if (f.conversation === null && !f.failed) {
            // SPEC 2 "No conversation selected": a title, the message, and the input box.
            const empty = screen.getByTestId('chat-empty');
            expect(empty.querySelector('h2')?.textContent).toBe(text.emptyTitle);
            expect(within(empty).getByText(text.emptyText)).toBeTruthy();
          } else {
            messagesShow(ui, f, reached.lang);
          }
          inputShows(f, reached.lang, true);
          sending(reached.lang, false);
          expect(screen.queryByTestId('cursor')).toBeNull();
        },
      },
    ],
  ],
};

describeScreenModel('chat send', model);

const ctx = (s: AnyMachineSnapshot) => s.context as ChatSendContext;

describeInvariants('chat send', model, [
  {
    name: 'no second message is sent while a reply is on its way (SPEC 4: ignored while a stream is in progress)',
    step: (before, event, after) =>
      before.matches('idle') ||
      (event.type !== 'SEND' && event.type !== 'RETRY' && event.type !== 'DRAFT.CHANGE') ||
      JSON.stringify(before.context) === JSON.stringify(after.context),
  },
  {
    name: 'a blank message is never sent (SPEC 5)',
    step: (before, event, after) =>
      event.type !== 'SEND' || !before.matches('idle') || ctx(before).draft.trim() !== '' || after.matches('idle'),
  },
  {
    name: 'what is sent is the trimmed text (SPEC 5)',
    state: (s) => !ctx(s).pending || ctx(s).pending!.user.content === ctx(s).pending!.user.content.trim(),
  },
  {
    name: 'a failed reply leaves no placeholder and the text is not lost (SPEC 4)',
    step: (_before, event, after) =>
      event.type !== 'STREAM.ERROR' ||
      (ctx(after).pending === null && ctx(after).failed !== null && ctx(after).draft === ctx(after).failed!.text),
  },
  {
    name: 'the stream is asked for 2000 tokens at most with the chosen context limit (SPEC 7)',
    state: (s) => !s.matches('streaming') || ctx(s).contextTokensLimit === 500,
  },
]);

describe('chat send: what the model walk does not reach', () => {
  afterEach(() => cleanup());

  const openWith = async (lang: Language, api: FakeApi, tokensAmount = START_BALANCE) => {
    localStorage.removeItem(MODEL_KEY);
    const ui = await openApp('/chat', { lang, api, user: signedInUser({ tokensAmount }) });
    await screen.findByTestId('chat-empty', {}, { timeout: 15_000 });
    return ui;
  };

  it.each(['ru', 'en'] as const)(
    '[%s] with no model list and none remembered, a message is not sent: "No model selected" (SPEC 8)',
    async (lang) => {
      const api = chatApi(BROKEN);
      const ui = await openWith(lang, api);
      try {
        await ui.user.type(input(), 'Hello{Enter}');
        await vi.waitFor(() => expect(toastTexts()).toContain(TEXT[lang].noModel));
        expect(api.sent('POST')).toHaveLength(0);
        expect(input().value).toBe('Hello');
        expect(ui.location()).toBe('/chat');
      } finally {
        ui.close();
      }
    },
  );

  it.each(['ru', 'en'] as const)(
    '[%s] a balance that pays for no reply sends nothing and says why, with the way to add tokens (SPEC 6)',
    async (lang) => {
      const api = chatApi();
      const ui = await openWith(lang, api, 0);
      try {
        const notice = screen.getByTestId('low-balance');
        expect(notice.textContent).toBe(`${TEXT[lang].lowBalance} ${TEXT[lang].addTokens}`);
        expect(within(notice).getByRole('link').getAttribute('href')).toBe('/billing');
        await ui.user.type(input(), 'Hello{Enter}');
        expect(screen.getByTestId<HTMLButtonElement>('chat-send').disabled).toBe(true);
        await ui.user.click(screen.getByTestId('chat-send'));
        expect(api.sent('POST')).toHaveLength(0);
        expect(input().value).toBe('Hello');
      } finally {
        ui.close();
      }
    },
  );

  it.each(['ru', 'en'] as const)(
    '[%s] a stored refusal, cut-off or filtered reply says so under it when the conversation opens (issue #25)',
    async (lang) => {
      const at = new Date().toISOString();
      const reply = (id: number, content: string, ending?: Ending) => ({
        id,
        role: 'assistant',
        content,
        model: 'gpt-4o',
        tokensUsed: 20,
        ...(ending ? { ending } : {}),
        createdAt: at,
      });
      const ask = (id: number) => ({
        id,
        role: 'user',
        content: `Question ${id}`,
        model: null,
        tokensUsed: null,
        createdAt: at,
      });
      // GET /llm/conversations/{id}: each stored reply with why it ended (tests/server/chat/stream.test.ts).
      const conversation = {
        ...CREATED,
        messages: [
          ask(1),
          reply(2, "I'm sorry, but I can't assist with that request.", 'refusal'),
          ask(3),
          reply(4, 'Once upon a time', 'length'),
          ask(5),
          reply(6, '', 'content_filter'),
          ask(7),
          reply(8, 'An ordinary answer.'),
        ],
      };
      const api = new FakeApi()
        .on('GET', '/llm/models', json(MODELS))
        .on('GET', '/llm/conversations', json({ success: true, data: [{ ...CREATED, messages: undefined }] }))
        .on('GET', ONE, json({ success: true, data: conversation }));
      localStorage.removeItem(MODEL_KEY);
      const ui = await openApp('/chat/9', { lang, api });
      try {
        await screen.findByTestId('chat-input', {}, { timeout: 15_000 });
        const replies = await screen.findAllByTestId('message-assistant');
        expect(replies.map((el) => within(el).queryByTestId('message-ending')?.textContent ?? null)).toEqual([
          TEXT[lang].endings.refusal,
          TEXT[lang].endings.length,
          TEXT[lang].endings.content_filter,
          null,
        ]);
        expect(replies.map((el) => within(el).getByTestId('assistant-markdown').textContent)).toEqual([
          "I'm sorry, but I can't assist with that request.",
          'Once upon a time',
          '',
          'An ordinary answer.',
        ]);
      } finally {
        ui.close();
      }
    },
  );

  it.each(['ru', 'en'] as const)(
    '[%s] an empty provider account: the reply fails with "chat is unavailable right now" in the user’s language (issue #25 item 9)',
    async (lang) => {
      const api = new FakeApi()
        .on('GET', '/llm/models', json(MODELS))
        .on('GET', '/llm/conversations', json({ success: true, data: [{ ...CREATED, messages: undefined }] }))
        .on('GET', ONE, json({ success: true, data: CREATED }))
        .hold('POST', STREAM);
      localStorage.removeItem(MODEL_KEY);
      const ui = await openApp('/chat/9', { lang, api });
      try {
        await ui.user.type(await screen.findByTestId('chat-input', {}, { timeout: 15_000 }), 'Hello{Enter}');
        const { writer } = await api.stream('POST', STREAM);
        // The server's frame for OpenAI's 429 insufficient_quota (tests/server/chat/stream.test.ts).
        writer.data({
          error: 'unavailable',
          message: 'Chat is unavailable right now. Please try again later.',
          billing: { inputTokens: 0, outputTokens: 0, cost: 0 },
          balanceAfter: START_BALANCE,
        });
        writer.done();
        await vi.waitFor(() => {
          expect(screen.getByTestId('failed-reason').textContent).toBe(TEXT[lang].reasons.unavailable);
          expect(toastTexts()).toContain(TEXT[lang].reasons.unavailable);
        });
        expect(document.body.textContent).not.toMatch(/quota|billing details/i);
      } finally {
        ui.close();
      }
    },
  );

  it('[en] a stream HTTP error shows the server’s message (SPEC 8)', async () => {
    const api = new FakeApi()
      .on('GET', '/llm/models', json(MODELS))
      .on('GET', '/llm/conversations', json({ success: true, data: [{ ...CREATED, messages: undefined }] }))
      .on('GET', ONE, json({ success: true, data: CREATED }))
      .on('POST', STREAM, { status: 500, body: { message: 'The model is overloaded' } });
    localStorage.removeItem(MODEL_KEY);
    const ui = await openApp('/chat/9', { lang: 'en', api });
    try {
      await ui.user.type(await screen.findByTestId('chat-input', {}, { timeout: 15_000 }), 'Hello{Enter}');
      await vi.waitFor(() => {
        expect(screen.getByTestId('failed-reason').textContent).toBe('The model is overloaded');
        expect(toastTexts()).toContain('The model is overloaded');
      });
    } finally {
      ui.close();
    }
  });
});
