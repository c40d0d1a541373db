// One file: what the chat screen shows in each state, on one harness of the real parts.
import { describe, expect, it } from 'vitest';
import type { Problem } from '../../src/domain/errors';
import {
  awaitedConversation,
  chatPage,
  followedReply,
  inputLocked,
  openingOf,
  sendFields,
  shownConversation,
  type ChatParts,
} from '../../src/machines/chat-page';
import {
  AT,
  FOUR,
  MINI,
  MODELS,
  NOT_FOUND_ERROR,
  chatHarness,
  conversation,
  message,
  pendingReply,
  summary,
} from './support/chat-page';

/**
 * What the chat screen shows (src/machines/chat-page.ts), read from the parts' snapshots as
 * the chat chart holds them, each brought to its state by the real part charts whose requests
 * the test answers (tests/machines/support/chat-page.ts). Expectations are SPEC section 2
 * "Chat", 4 "Chat send", 5 "Chat", 8, and the view's own doc comments.
 */

const ASKED = message(51, 'user', 'How do I bake bread?');
const ANSWERED = message(52, 'assistant', 'Flour, water, salt.', { model: 'gpt-4o', tokensUsed: 40 });

/** Chat 5 open and loaded, with an exchange in it. */
async function open5(options: Parameters<typeof chatHarness>[0] = {}) {
  const h = chatHarness(options);
  await h.loadLists([summary(5), summary(6)]);
  h.route('5');
  await h.loaded(conversation(5, [ASKED, ANSWERED]));
  return h;
}

const seen = (h: ReturnType<typeof chatHarness>): ChatParts => h.actor.getSnapshot().context.seen;
const kind = (h: ReturnType<typeof chatHarness>) => h.page().main.kind;

describe('the main area (SPEC 2 "Chat")', () => {
  it('shows a spinner and a disabled input while the lists load', async () => {
    const h = chatHarness();
    h.type('hello');
    expect(kind(h)).toBe('loading');
    expect(h.page().input.disabled).toBe(true);
    expect(h.page().input.canSend).toBe(false);
    // The models loaded, the conversations still loading.
    h.requests.models[0]!.resolve(MODELS);
    await h.settle();
    expect(kind(h)).toBe('loading');
    expect(h.page().input.disabled).toBe(true);
  });

  it('with no conversation selected: the empty state, the page’s own title, nothing marked, the input open', async () => {
    const h = chatHarness();
    await h.loadLists([summary(5)]);
    h.route(undefined);
    expect(h.page().main).toEqual({ kind: 'empty' });
    expect(h.page().title).toBeNull();
    expect(h.page().openId).toBeNull();
    expect(h.page().conversations).toEqual([summary(5)]);
    expect(h.page().input.disabled).toBe(false);
  });

  it('shows a spinner while the conversation the route names loads, then its title and messages', async () => {
    const h = chatHarness();
    await h.loadLists([summary(5)]);
    h.route('5');
    expect(kind(h)).toBe('loading');
    expect(h.page().openId).toBe(5);
    expect(h.page().title).toBeNull();
    expect(h.page().input.disabled).toBe(true);
    await h.loaded(conversation(5, [ASKED, ANSWERED]));
    const page = h.page();
    expect(page.title).toBe('Chat 5');
    expect(page.openId).toBe(5);
    expect(page.input.disabled).toBe(false);
    // SPEC 2: a bubble shows the model and time when not streaming and it has tokensUsed or a model.
    expect(page.main).toEqual({
      kind: 'conversation',
      messages: [
        { message: ASKED, streaming: false, meta: false },
        { message: ANSWERED, streaming: false, meta: true },
      ],
      sending: false,
      failed: null,
      empty: false,
    });
  });

  it('shows the model and time of a message that has only a model, or only tokensUsed', async () => {
    const h = chatHarness();
    await h.loadLists();
    h.route('5');
    const onlyModel = message(53, 'assistant', 'a', { model: 'gpt-4o' });
    const onlyTokens = message(54, 'assistant', 'b', { tokensUsed: 3 });
    await h.loaded(conversation(5, [onlyModel, onlyTokens]));
    const main = h.page().main;
    expect(main.kind === 'conversation' && main.messages.map((m) => m.meta)).toEqual([true, true]);
  });

  it('a conversation with no messages shows the message list’s empty state', async () => {
    const h = chatHarness();
    await h.loadLists();
    h.route('5');
    await h.loaded(conversation(5));
    expect(h.page().main).toEqual({ kind: 'conversation', messages: [], sending: false, failed: null, empty: true });
  });

  it('says "not found" when the route id matches no conversation', async () => {
    const h = chatHarness();
    await h.loadLists();
    h.route('77');
    h.requests.conversation[0]!.reject(NOT_FOUND_ERROR);
    await h.settle();
    expect(h.page().main).toEqual({ kind: 'notFound' });
    expect(h.page().title).toBeNull();
  });

  it('a conversation that could not be read (not a missing one) offers Retry, and a spinner while it is read again', async () => {
    const h = chatHarness();
    await h.loadLists();
    h.route('5');
    h.requests.conversation[0]!.reject(new TypeError('Failed to fetch'));
    await h.settle();
    expect(h.page().main).toEqual({ kind: 'loadFailed' });
    h.routing.send({ type: 'CONVERSATION.RETRY' });
    expect(kind(h)).toBe('loading');
    await h.loaded(conversation(5));
    expect(kind(h)).toBe('conversation');
  });

  it('going to another conversation shows a spinner, not the previous one’s title or messages', async () => {
    const h = await open5();
    h.route('6');
    expect(kind(h)).toBe('loading');
    expect(h.page().title).toBeNull();
    expect(h.page().openId).toBe(6);
    expect(h.page().input.disabled).toBe(true);
  });
});

describe('the conversation list and the model list', () => {
  it('a list that failed to load says so (SPEC 8) and shows it reloading on Retry', async () => {
    const h = chatHarness();
    h.requests.models[0]!.resolve(MODELS);
    await h.settle();
    h.requests.conversations[0]!.reject(new TypeError('Failed to fetch'));
    await h.settle();
    expect(h.page().list).toEqual({
      kind: 'failed',
      problem: { code: 'loadConversations', message: 'Failed to load conversations' },
    });
    h.routing.send({ type: 'CONVERSATIONS.RETRY' });
    expect(h.page().list).toEqual({ kind: 'loading' });
    h.requests.conversations[1]!.resolve([summary(5)]);
    await h.settle();
    expect(h.page().list).toEqual({ kind: 'loaded' });
    expect(h.page().conversations).toEqual([summary(5)]);
  });

  it('a model list that failed to load says so with the input (SPEC 8), until it loads', async () => {
    const h = chatHarness();
    h.requests.models[0]!.reject(new TypeError('Failed to fetch'));
    await h.settle();
    h.requests.conversations[0]!.resolve([]);
    await h.settle();
    const failure: Problem = { code: 'loadModels', message: 'Failed to load available models' };
    expect(h.page().input.modelsFailure).toEqual(failure);
    expect(h.page().models).toBeNull();
    expect(h.page().settings.models).toEqual([]);
    h.routing.send({ type: 'MODELS.RETRY' });
    h.requests.models[1]!.resolve(MODELS);
    await h.settle();
    expect(h.page().input.modelsFailure).toBeNull();
    expect(h.page().models).toEqual(MODELS);
  });

  it('the settings: the models offered, the chosen one (the default when none is remembered), the context limit (default 500), open or closed', async () => {
    const h = chatHarness();
    await h.loadLists();
    const page = h.page();
    expect(page.settings).toEqual({ open: false, models: [MINI, FOUR], model: MINI.id, contextTokensLimit: 500 });
    expect(page.input.model).toBe(MINI.id);
    expect(page.input.contextTokensLimit).toBe(500);
    h.settings.send({ type: 'SETTINGS.OPEN' });
    h.settings.send({ type: 'SETTINGS.MODEL', model: FOUR.id });
    h.settings.send({ type: 'SETTINGS.CONTEXT_LIMIT', value: 1000 });
    expect(h.page().settings).toEqual({ open: true, models: [MINI, FOUR], model: FOUR.id, contextTokensLimit: 1000 });
    expect(h.page().input.model).toBe(FOUR.id);
    expect(h.page().input.contextTokensLimit).toBe(1000);
  });
});

describe('the input (SPEC 2 "Input area", SPEC 5 "Chat")', () => {
  it('Send is enabled only when the trimmed text is non-empty and the input is not disabled', async () => {
    const h = await open5();
    expect(h.page().input.canSend).toBe(false);
    h.type('   \n ');
    expect(h.page().input.canSend).toBe(false);
    h.type('  hi  ');
    expect(h.page().input).toMatchObject({ draft: '  hi  ', disabled: false, canSend: true, lowBalance: false });
    // The conversation loads again (another route): disabled, so no Send.
    h.route('6');
    expect(h.page().input).toMatchObject({ disabled: true, canSend: false });
  });

  it('a balance that cannot pay any reply says so, and Send is off; one token pays the cheapest', async () => {
    const h = await open5();
    h.type('hi');
    expect(h.page(0).input).toMatchObject({ lowBalance: true, canSend: false });
    expect(h.page(1).input).toMatchObject({ lowBalance: false, canSend: true });
  });

  it('starts with the text kept from the last session (issue #26)', () => {
    const h = chatHarness({ draft: 'left over' });
    expect(h.page().input.draft).toBe('left over');
  });
});

describe('a message in an open conversation (SPEC 4 "Chat send")', () => {
  it('shows the message at once, the three dots until words arrive, the streamed reply with its cursor, the input disabled; then the reply with its model', async () => {
    const h = await open5();
    h.type('Hello');
    h.actor.send({ type: 'SEND' });
    let page = h.page();
    expect(page.input).toMatchObject({ draft: '', disabled: true, canSend: false, streaming: true, stopping: false });
    expect(page.main.kind === 'conversation' && page.main.sending).toBe(true);
    const shownTexts = () => {
      const main = h.page().main;
      return main.kind === 'conversation' ? main.messages.map((m) => [m.message.content, m.streaming, m.meta]) : [];
    };
    // The empty assistant message is not a bubble: the three dots say a reply is coming.
    expect(shownTexts()).toEqual([
      [ASKED.content, false, false],
      [ANSWERED.content, false, true],
      ['Hello', false, false],
    ]);
    h.streams[0]!.send({ type: 'STREAM.CHUNK', content: 'Hi' });
    expect(shownTexts().at(-1)).toEqual(['Hi', true, false]);
    h.streams[0]!.send({ type: 'STREAM.COMPLETE', tokensUsed: 7, balanceAfter: 93, messageId: 60 });
    page = h.page();
    expect(page.input).toMatchObject({ disabled: false, streaming: false });
    expect(page.main.kind === 'conversation' && page.main.sending).toBe(false);
    expect(shownTexts().slice(2)).toEqual([
      ['Hello', false, false],
      ['Hi', false, true],
    ]);
  });

  it('Stop: shown as stopping until the reply ends; a Stop that failed is said', async () => {
    const h = await open5();
    h.type('Hello');
    h.actor.send({ type: 'SEND' });
    h.streams[0]!.send({ type: 'STREAM.CHUNK', content: 'Hi' });
    h.actor.send({ type: 'STOP' });
    expect(h.page().input).toMatchObject({ streaming: true, stopping: true, stopFailure: null });
    const refused = Object.assign(new Error('Internal server error'), { code: 'INTERNAL' });
    h.requests.sendStops[0]!.reject(refused);
    await h.settle();
    expect(h.page().input).toMatchObject({
      streaming: true,
      stopping: false,
      stopFailure: { code: 'INTERNAL', message: 'Internal server error' },
    });
    h.actor.send({ type: 'STOP' });
    h.requests.sendStops[1]!.resolve({ stopped: true });
    await h.settle();
    // Asked: still stopping until the stream ends.
    expect(h.page().input).toMatchObject({ stopping: true, stopFailure: null });
    h.streams[0]!.send({ type: 'STREAM.ENDED' });
    expect(h.page().input).toMatchObject({ streaming: false, stopping: false, disabled: false });
  });

  it('a Stop that failed is no longer said once the reply has ended, nor with the next message', async () => {
    const h = await open5();
    h.type('Hello');
    h.actor.send({ type: 'SEND' });
    h.actor.send({ type: 'STOP' });
    h.requests.sendStops[0]!.reject(new TypeError('Failed to fetch'));
    await h.settle();
    expect(h.page().input.stopFailure).toMatchObject({ code: 'stopReply' });
    h.streams[0]!.send({ type: 'STREAM.COMPLETE', tokensUsed: 3, balanceAfter: 97 });
    expect(h.page().input).toMatchObject({ streaming: false, stopping: false, stopFailure: null });
    h.type('Again');
    h.actor.send({ type: 'SEND' });
    expect(h.page().input).toMatchObject({ streaming: true, stopping: false, stopFailure: null });
  });

  it('a message that failed stays in its conversation with its reason; the way to add tokens only when the tokens ran short', async () => {
    const h = await open5();
    h.type('Hello');
    h.actor.send({ type: 'SEND' });
    const short: Problem = { code: 'INSUFFICIENT_TOKENS', message: 'Insufficient tokens' };
    h.streams[0]!.send({ type: 'STREAM.ERROR', problem: short });
    let main = h.page().main;
    expect(main.kind === 'conversation' && main.failed).toEqual({
      text: 'Hello',
      problem: short,
      conversationId: 5,
      kept: false,
      addTokens: true,
    });
    // SPEC 4: the placeholder goes; the text is back in the input.
    expect(main.kind === 'conversation' && main.messages.map((m) => m.message.content)).toEqual([
      ASKED.content,
      ANSWERED.content,
    ]);
    expect(h.page().input.draft).toBe('Hello');
    h.actor.send({ type: 'SEND' });
    const upstream: Problem = { code: 'CHAT_UPSTREAM', message: 'The model did not answer' };
    h.streams[1]!.send({ type: 'STREAM.ERROR', problem: upstream });
    main = h.page().main;
    expect(main.kind === 'conversation' && main.failed).toMatchObject({ problem: upstream, addTokens: false });
    // It is not shown in another conversation, nor on /chat.
    h.route('6');
    await h.loaded(conversation(6));
    main = h.page().main;
    expect(main.kind === 'conversation' && main.failed).toBeNull();
    h.route(undefined);
    expect(h.page().main).toEqual({ kind: 'empty' });
  });

  it('a failed message on /chat shows there, not as the empty state', async () => {
    const h = chatHarness();
    await h.loadLists();
    h.route(undefined);
    h.type('Hello');
    h.actor.send({ type: 'SEND' });
    h.requests.creates[0]!.reject(new TypeError('Failed to fetch'));
    await h.settle();
    const main = h.page().main;
    expect(main).toMatchObject({ kind: 'conversation', messages: [], sending: false, empty: false });
    expect(main.kind === 'conversation' && main.failed).toMatchObject({
      text: 'Hello',
      conversationId: null,
      problem: { code: 'createConversation', message: 'Failed to create conversation' },
    });
  });
});

describe('the first message (SPEC 2: creates a conversation, navigates, waits until it has loaded, then sends)', () => {
  it('shows the message waiting while its conversation is created and loads, not a spinner; the new one is marked', async () => {
    const h = chatHarness();
    await h.loadLists([summary(5)]);
    h.route(undefined);
    h.type('Hello');
    h.actor.send({ type: 'SEND' });
    const texts = () => {
      const main = h.page().main;
      return main.kind === 'conversation' ? main.messages.map((m) => m.message.content) : main.kind;
    };
    expect(texts()).toEqual(['Hello']);
    expect(h.page().input.disabled).toBe(true);
    h.requests.creates[0]!.resolve(conversation(9));
    await h.settle();
    // Selected and opened (SPEC 2), loading: the message is still what is shown.
    expect(h.page().openId).toBe(9);
    expect(texts()).toEqual(['Hello']);
    expect(h.page().main).toMatchObject({ sending: true });
    expect(h.page().conversations.map((c) => c.id)).toEqual([9, 5]);
    expect(h.streams).toEqual([]);
    await h.loaded(conversation(9));
    expect(h.streams.map((s) => s.input.conversationId)).toEqual([9]);
    expect(texts()).toEqual(['Hello']);
  });

  it('from a conversation that was not found, shows only the new message, not the conversation open before', async () => {
    const h = await open5();
    h.route('77');
    h.requests.conversation[1]!.reject(NOT_FOUND_ERROR);
    await h.settle();
    h.type('Hello');
    h.actor.send({ type: 'SEND' });
    expect(h.requests.creates).toHaveLength(1);
    h.requests.creates[0]!.resolve(conversation(9));
    await h.settle();
    const main = h.page().main;
    expect(main.kind === 'conversation' && main.messages.map((m) => m.message.content)).toEqual(['Hello']);
  });
});

describe('a reply written elsewhere (issue #28 item 5)', () => {
  async function following() {
    const h = chatHarness();
    await h.loadLists([summary(5), summary(6)]);
    h.route('5');
    await h.loaded(conversation(5, [ASKED], pendingReply(71, 'Flour, water')));
    return h;
  }

  it('is shown being written after the conversation’s messages, with the three dots; the input is disabled and Stop offered', async () => {
    const h = await following();
    const page = h.page();
    expect(page.input).toMatchObject({ disabled: true, canSend: false, streaming: true, stopping: false });
    expect(page.main).toMatchObject({ kind: 'conversation', sending: true, failed: null, empty: false });
    const main = page.main.kind === 'conversation' ? page.main : null;
    expect(main?.messages.map((m) => [m.message.role, m.message.content, m.streaming, m.meta])).toEqual([
      ['user', ASKED.content, false, false],
      ['assistant', 'Flour, water', true, false],
    ]);
    expect(main?.messages[1]!.message).toMatchObject({ model: 'gpt-4o', createdAt: AT });
  });

  it('before its first words: only the three dots', async () => {
    const h = chatHarness();
    await h.loadLists();
    h.route('5');
    await h.loaded(conversation(5, [ASKED], pendingReply(71, '')));
    expect(h.page().main).toMatchObject({ kind: 'conversation', sending: true, empty: false });
    const main = h.page().main;
    expect(main.kind === 'conversation' && main.messages.map((m) => m.message.content)).toEqual([ASKED.content]);
  });

  it('Stop is shown stopping, and a failed Stop says why', async () => {
    const h = await following();
    h.actor.send({ type: 'STOP' });
    expect(h.page().input).toMatchObject({ stopping: true, stopFailure: null });
    h.requests.replyStops[0]!.reject(new TypeError('Failed to fetch'));
    await h.settle();
    expect(h.page().input).toMatchObject({
      stopping: false,
      stopFailure: { code: 'stopReply', message: 'Network error occurred' },
    });
    h.actor.send({ type: 'STOP' });
    h.requests.replyStops[1]!.resolve({ stopped: true });
    await h.settle();
    expect(h.page().input).toMatchObject({ stopping: true, stopFailure: null });
  });

  it('counts only on the conversation the route names', async () => {
    const h = await following();
    const followingParts = seen(h);
    h.route('6');
    await h.loaded(conversation(6));
    // The reply still followed, as a part may say before it learns of the change.
    const parts: ChatParts = { ...seen(h), reply: followingParts.reply };
    expect(followedReply(parts)).toBeNull();
    expect(inputLocked(parts)).toBe(false);
    const page = chatPage(parts, 100);
    expect(page.input).toMatchObject({ disabled: false, streaming: false });
    expect(page.main).toEqual({ kind: 'conversation', messages: [], sending: false, failed: null, empty: true });
    expect(followedReply(followingParts)).toMatchObject({ conversationId: 5, content: 'Flour, water' });
  });

  it('its Stop under way is not shown on a conversation where it is not followed', async () => {
    const h = await following();
    h.actor.send({ type: 'STOP' });
    const stopping = seen(h).reply;
    h.requests.replyStops[0]!.resolve({ stopped: true });
    await h.settle();
    const asked = seen(h).reply;
    h.route('6');
    await h.loaded(conversation(6));
    expect(chatPage({ ...seen(h), reply: stopping }, 100).input.stopping).toBe(false);
    expect(chatPage({ ...seen(h), reply: asked }, 100).input.stopping).toBe(false);
  });

  it('its Stop failure is not said on a conversation where it is not followed', async () => {
    const h = await following();
    h.actor.send({ type: 'STOP' });
    h.requests.replyStops[0]!.reject(new TypeError('Failed to fetch'));
    await h.settle();
    const failedStop = seen(h).reply;
    h.route('6');
    await h.loaded(conversation(6));
    expect(chatPage({ ...seen(h), reply: failedStop }, 100).input).toMatchObject({
      stopping: false,
      stopFailure: null,
    });
  });
});

describe('the helpers the chart guards with', () => {
  it('shownConversation: the conversation once loaded, none while it loads or on /chat', async () => {
    const h = chatHarness();
    await h.loadLists();
    expect(shownConversation(seen(h).routing)).toBeNull();
    h.route('5');
    expect(shownConversation(seen(h).routing)).toBeNull();
    await h.loaded(conversation(5, [ASKED]));
    expect(shownConversation(seen(h).routing)).toEqual(conversation(5, [ASKED]));
  });

  it('openingOf: pending until the route names it and it loads; unavailable when missing or unreadable', async () => {
    const h = chatHarness();
    await h.loadLists();
    expect(openingOf(seen(h).routing, 5)).toBe('pending');
    h.route('5');
    expect(openingOf(seen(h).routing, 5)).toBe('pending');
    await h.loaded(conversation(5));
    expect(openingOf(seen(h).routing, 5)).toBe('shown');
    expect(openingOf(seen(h).routing, 6)).toBe('pending');
    h.route('6');
    h.requests.conversation[1]!.reject(NOT_FOUND_ERROR);
    await h.settle();
    expect(openingOf(seen(h).routing, 6)).toBe('unavailable');
    // Another conversation's failure says nothing of this one.
    expect(openingOf(seen(h).routing, 5)).toBe('pending');
    h.route('7');
    h.requests.conversation[2]!.reject(new TypeError('Failed to fetch'));
    await h.settle();
    expect(openingOf(seen(h).routing, 7)).toBe('unavailable');
  });

  it('awaitedConversation: the one created for a first message, only while chat-send waits for it', async () => {
    const h = chatHarness();
    await h.loadLists();
    h.route(undefined);
    h.type('Hello');
    h.actor.send({ type: 'SEND' });
    expect(awaitedConversation(seen(h).send)).toBeNull();
    h.requests.creates[0]!.resolve(conversation(9));
    await h.settle();
    // The chart has noted it; chat-send still waits.
    const waiting = h.send.getSnapshot();
    expect(awaitedConversation(waiting)).toBe(9);
    await h.loaded(conversation(9));
    expect(awaitedConversation(seen(h).send)).toBeNull();
  });

  it('sendFields: the chosen model and limit, the conversation on screen (none on /chat), whether the input is disabled, the balance and the moment', async () => {
    const h = await open5();
    h.settings.send({ type: 'SETTINGS.MODEL', model: FOUR.id });
    h.settings.send({ type: 'SETTINGS.CONTEXT_LIMIT', value: 2000 });
    expect(sendFields(seen(h), 42, AT)).toEqual({
      model: FOUR.id,
      contextTokensLimit: 2000,
      conversationId: 5,
      disabled: false,
      balance: 42,
      sentAt: AT,
    });
    h.route('6');
    expect(sendFields(seen(h), 42, AT)).toMatchObject({ conversationId: null, disabled: true });
    h.route(undefined);
    expect(sendFields(seen(h), 42, AT)).toMatchObject({ conversationId: null, disabled: false });
  });
});

// Defects these tests found in src/machines (reported, not fixed here): each `it.fails` states
// what SPEC 2 asks and passes while the code does otherwise; when fixed, make it an `it`.
describe('a conversation opened while a message is on its way elsewhere', () => {
  const texts = (h: ReturnType<typeof chatHarness>) => {
    const main = h.page().main;
    return main.kind === 'conversation' ? main.messages.map((m) => m.message.content) : main.kind;
  };

  it('a reply streaming in one conversation is not shown in another one opened meanwhile', async () => {
    const h = await open5();
    h.type('Hello');
    h.actor.send({ type: 'SEND' });
    h.streams[0]!.send({ type: 'STREAM.CHUNK', content: 'Hi' });
    h.route('6');
    await h.loaded(conversation(6, [message(61, 'user', 'Six')]));
    expect(texts(h)).toEqual(['Six']);
  });

  // The hand-over waits only for the awaited conversation (tests/machines/chat-send.test.ts
  // pins that it waits through another one's opening): opening another one leaves chat-send
  // waiting and the input disabled.
  it.fails('opening another conversation while the first message’s one loads leaves it open and usable', async () => {
    const h = chatHarness();
    await h.loadLists([summary(5)]);
    h.route(undefined);
    h.type('Hello');
    h.actor.send({ type: 'SEND' });
    h.requests.creates[0]!.resolve(conversation(9));
    await h.settle();
    h.route('5');
    await h.loaded(conversation(5, [message(51, 'user', 'Old')]));
    expect({ disabled: h.page().input.disabled, texts: texts(h) }).toEqual({ disabled: false, texts: ['Old'] });
  });
});
