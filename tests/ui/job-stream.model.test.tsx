// One file: one chart's walk: its table of what each state shows (SPEC) and the steps that drive it
// read side by side.
import { cleanup, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AnyEventObject, AnyMachineSnapshot } from 'xstate';
import type { Job, JobEvent } from '../../src/domain/jobs';
import type { Language } from '../../src/i18n';
import { jobStreamMachine, type JobStreamContext } from '../../src/machines/job-stream';
import { openApp, type OpenApp } from './support/app';
import { apiError, FakeApi, json, type StreamWriter } from './support/fake-api';
import { describeInvariants, describeScreenModel, type Reached, type ScreenModel } from './support/model';

/*
 * The job events' stream (issue #28 item 4: "A dropped connection resumes from the last event
 * it saw (Last-Event-ID), without loss or duplication"; the brief's contract: GET /api/events,
 * frames `id:`/`event:`/`data:`, `: ping` heartbeats, a `ready` first frame without
 * Last-Event-ID, 401 when signed out) walked along its statechart on the real app at
 * /dashboard, where the queue panel shows the connection and the jobs the events bring.
 *
 * What each state shows (the `sees` table below):
 *
 * | state            | what is asserted                                                                 |
 * | ---------------- | -------------------------------------------------------------------------------- |
 * | live.connecting  | "connecting" (first time) or "connection lost" (after a failure); a request to   |
 * |                  | GET /api/events is waiting, carrying Last-Event-ID = the last id seen (none at   |
 * |                  | first); the jobs as the events so far left them                                   |
 * | live.open        | "live updates on"; the jobs as the events so far left them, each event once      |
 * | waiting          | "connection lost" with Reconnect now; no request waiting                         |
 * | signedOut        | the sign-in page saying the session ended, /dashboard remembered                 |
 * | always           | the header shows the balance the last event stated; the requests for the stream  |
 * |                  | are one per connection; nothing reaches a server the app does not call           |
 */

vi.setConfig({ testTimeout: 30_000 });

const EVENTS = '/api/events';
const JOBS = '/api/jobs';
const IMAGES = '/api/images/my-images';
const START_BALANCE = 50;
/** The id the server's `ready` frame names: the newest event before this connection. */
const READY_ID = '40';

const TEXT = {
  ru: {
    connecting: 'Подключаемся к обновлениям…',
    open: 'Обновления в реальном времени',
    lost: 'Связь с сервером потеряна, переподключаемся…',
    reconnect: 'Переподключиться',
    states: {
      queued: 'В очереди',
      running: 'Выполняется',
      completed: 'Готово',
      failed: 'Ошибка',
      cancelled: 'Отменено',
    },
    position: (n: number) => `Место в очереди: ${n}`,
    sessionEnded: 'Сеанс завершён. Войдите снова, чтобы продолжить с того же места.',
    /** A portrait's provider failure, worded as the portrait creator words it (SPEC 8). */
    portraitFailed: 'Не удалось создать портрет',
    tokens: (n: number) =>
      `${n} ${new Intl.PluralRules('ru').select(n) === 'one' ? 'токен' : ['few'].includes(new Intl.PluralRules('ru').select(n)) ? 'токена' : 'токенов'}`,
  },
  en: {
    connecting: 'Connecting to live updates…',
    open: 'Live updates on',
    lost: 'Connection lost, reconnecting…',
    reconnect: 'Reconnect now',
    states: { queued: 'Queued', running: 'Running', completed: 'Done', failed: 'Failed', cancelled: 'Cancelled' },
    position: (n: number) => `Place in line: ${n}`,
    sessionEnded: 'Your session has ended. Sign in again to continue where you were.',
    portraitFailed: 'Face-swap generation failed',
    tokens: (n: number) => `${n} ${n === 1 ? 'token' : 'tokens'}`,
  },
};

// ---------------------------------------------------------------------------------------
// The server's side: two jobs, and the three events that finish them, in order.

const T0 = '2026-11-27T10:00:00.000Z';
const job = (fields: Partial<Job> & Pick<Job, 'id' | 'kind' | 'model' | 'prompt' | 'state'>): Job => ({
  cost: 12,
  position: null,
  etaSeconds: null,
  progress: 0,
  createdAt: T0,
  startedAt: null,
  finishedAt: null,
  error: null,
  image: null,
  ...fields,
});
const AURORA = job({
  id: 7,
  kind: 'generation',
  model: 'sd3',
  prompt: 'Northern lights over a fjord',
  state: 'running',
  progress: 0.3,
  etaSeconds: 14,
  startedAt: T0,
});
const KNIGHT = job({
  id: 8,
  kind: 'portrait',
  model: 'portrait',
  prompt: 'A knight in silver armour',
  state: 'queued',
  position: 1,
  etaSeconds: 50,
  createdAt: '2026-11-27T10:00:05.000Z',
});
/** Each event as the server sends it: its id, the job, the balance after it. */
const SCRIPT: Array<{ id: string; event: JobEvent }> = [
  {
    id: '41',
    event: {
      job: {
        ...AURORA,
        state: 'completed',
        progress: 1,
        etaSeconds: null,
        finishedAt: '2026-11-27T10:00:20.000Z',
        image: {
          id: 301,
          url: 'http://localhost/images/aurora.png',
          thumbnailUrl: 'http://localhost/images/aurora.webp',
        },
      },
      balance: 38,
    },
  },
  {
    id: '42',
    event: {
      job: { ...KNIGHT, state: 'running', position: null, progress: 0.1, etaSeconds: 30, startedAt: T0 },
      balance: 38,
    },
  },
  {
    id: '43',
    event: {
      job: {
        ...KNIGHT,
        state: 'failed',
        position: null,
        progress: 1,
        etaSeconds: null,
        finishedAt: '2026-11-27T10:01:00.000Z',
        error: { code: 'PROVIDER_ERROR', message: 'The portrait service did not answer in time' },
      },
      balance: 50,
    },
  },
];

/** The user's jobs once the first `delivered` events happened on the server. */
function serverJobs(delivered: number): Job[] {
  const jobs = new Map<number, Job>([
    [AURORA.id, AURORA],
    [KNIGHT.id, KNIGHT],
  ]);
  for (const { event } of SCRIPT.slice(0, delivered)) jobs.set(event.job.id, event.job);
  return [...jobs.values()];
}

// ---------------------------------------------------------------------------------------
// What the user has seen happen: the oracle the rows read.

interface Facts {
  /** The id of the last event delivered, sent as Last-Event-ID on the next connection. */
  lastId: string | null;
  /** Events of the script shown so far. */
  delivered: number;
  /** Failed connections since the last that opened. */
  failures: number;
  /** The Last-Event-ID each connection asked with, in order (null: none). */
  connections: Array<string | null>;
  balance: number;
  signedOut: boolean;
}

function factsOf(events: readonly AnyEventObject[]): Facts {
  const f: Facts = {
    lastId: null,
    delivered: 0,
    failures: 0,
    connections: [null],
    balance: START_BALANCE,
    signedOut: false,
  };
  for (const event of events) {
    const e = event as AnyEventObject & { id?: string; via?: string };
    switch (event.type) {
      case 'STREAM.OPENED':
        f.failures = 0;
        break;
      case 'STREAM.READY':
        f.lastId = e.id!;
        break;
      case 'STREAM.EVENT': {
        const index = SCRIPT.findIndex((s) => s.id === e.id);
        // Delivered once: an id at or below the last one seen is a repeat and changes nothing.
        if (f.lastId !== null && Number(e.id) <= Number(f.lastId)) break;
        f.lastId = e.id!;
        f.delivered = index + 1;
        f.balance = SCRIPT[index]!.event.balance;
        break;
      }
      case 'STREAM.FAILED':
        f.failures += 1;
        break;
      case 'STREAM.UNAUTHORIZED':
        f.signedOut = true;
        break;
      default:
        // RETRY, or the pause over: the stream is asked for again.
        f.connections.push(f.lastId);
    }
  }
  return f;
}

// ---------------------------------------------------------------------------------------
// The screen.

interface StreamUi extends OpenApp {
  writer: StreamWriter | null;
  /** Events of the script that happened on the server (what GET /api/jobs answers with). */
  server: { delivered: number };
}

const panel = () => screen.getByTestId('queue-panel');
const status = () => within(panel()).getByTestId('queue-stream');

function jobsShow(f: Facts, lang: Language) {
  const text = TEXT[lang];
  const jobs = serverJobs(f.delivered);
  for (const expected of jobs) {
    const row = within(panel()).getByTestId(`job-${expected.id}`);
    expect(row.getAttribute('data-state'), `job ${expected.id}`).toBe(expected.state);
    expect(within(row).getByTestId('job-state').textContent).toBe(text.states[expected.state]);
    expect(within(row).getByTestId('job-prompt').textContent).toBe(expected.prompt);
    expect(within(row).queryByTestId('job-position')?.textContent ?? null).toBe(
      expected.position === null ? null : text.position(expected.position),
    );
    expect(within(row).queryByTestId('job-error')?.textContent ?? null).toBe(
      expected.error ? text.portraitFailed : null,
    );
  }
  // Each job once, whatever was replayed.
  expect(within(panel()).getAllByRole('listitem')).toHaveLength(jobs.length);
}

/** The request of the connection being made (or made last) asked from the last id seen. */
function connectionAsked(ui: StreamUi, f: Facts) {
  const sent = ui.api.sent('GET', EVENTS);
  const expected = f.connections.at(-1)!;
  expect(sent.at(-1)!.headers.get('Last-Event-ID'), 'Last-Event-ID of the last connection').toBe(expected);
  expect(sent.at(-1)!.headers.get('accept')).toBe('text/event-stream');
  // Every reconnection asked with the id seen before it (the first ones, without one).
  const asked = [...new Set(sent.map((r) => r.headers.get('Last-Event-ID')))];
  expect(asked).toEqual([...new Set(f.connections)]);
}

const ctx = (snapshot: AnyMachineSnapshot) => snapshot.context as JobStreamContext;
const AFTER = 'xstate.after.backoff.job-stream.waiting';

export const model: ScreenModel<StreamUi> = {
  machine: jobStreamMachine,
  input: {},
  events: (snapshot: AnyMachineSnapshot) => {
    const c = ctx(snapshot);
    if (snapshot.matches({ live: 'connecting' })) {
      return [
        { type: 'STREAM.OPENED' },
        // Two failures in a row at most: the pause doubles each time (1 s, 2 s…).
        ...(c.failures < 2
          ? [
              { type: 'STREAM.FAILED', via: 'refused' },
              { type: 'STREAM.FAILED', via: 'network' },
            ]
          : []),
        { type: 'STREAM.UNAUTHORIZED' },
      ];
    }
    if (snapshot.matches({ live: 'open' })) {
      const next = SCRIPT.findIndex((s) => c.lastEventId === null || Number(s.id) > Number(c.lastEventId));
      return [
        // The first frame of a connection made without Last-Event-ID.
        ...(c.lastEventId === null ? [{ type: 'STREAM.READY', id: READY_ID }] : []),
        ...(next >= 0 ? [{ type: 'STREAM.EVENT', id: SCRIPT[next]!.id, event: SCRIPT[next]!.event }] : []),
        // A server that sends an event again (it must not show twice).
        ...(c.lastEventId !== null && c.lastEventId !== READY_ID
          ? [{ type: 'STREAM.EVENT', id: c.lastEventId, event: SCRIPT.find((s) => s.id === c.lastEventId)!.event }]
          : []),
        ...(c.failures < 2
          ? [
              { type: 'STREAM.FAILED', via: 'broken' },
              { type: 'STREAM.FAILED', via: 'ended' },
            ]
          : []),
      ];
    }
    if (snapshot.matches('waiting')) {
      // The pause is waited out only after a first failure (1 s); otherwise Reconnect now.
      return [{ type: 'RETRY' }, ...(c.failures === 1 ? [{ type: AFTER }] : [])];
    }
    return [];
  },
  serializeState: (snapshot: AnyMachineSnapshot) =>
    JSON.stringify([snapshot.value, ctx(snapshot).lastEventId, Math.min(ctx(snapshot).failures, 2)]),
  edgeKey: (before: AnyMachineSnapshot, event: AnyEventObject, after: AnyMachineSnapshot) =>
    JSON.stringify([
      before.value,
      event.type,
      (event as { via?: string }).via ?? null,
      // Each event of the script, and each repeated one, is a transition of its own.
      event.type === 'STREAM.EVENT'
        ? [(event as { id?: string }).id, ctx(before).lastEventId === (event as { id?: string }).id]
        : null,
      // A reconnection with an id and without one differ on the wire.
      ctx(before).lastEventId !== null,
      after.value,
    ]),
  maxSteps: 16,
  async open(lang: Language) {
    const server = { delivered: 0 };
    const api = new FakeApi()
      .hold('GET', EVENTS)
      .on('GET', JOBS, () => json({ success: true, data: { jobs: serverJobs(server.delivered), perUserLimit: 4 } }))
      .on(
        'GET',
        IMAGES,
        json({
          success: true,
          data: { images: [], pagination: { currentPage: 1, totalPages: 0, total: 0, hasNext: false, hasPrev: false } },
        }),
      );
    const ui = await openApp('/dashboard', { lang, api });
    await screen.findByTestId('queue-panel', {}, { timeout: 10_000 });
    return Object.assign(ui, { writer: null, server });
  },
  close: (ui: StreamUi) => ui.close(),
  async perform(ui: StreamUi, event: AnyEventObject, before: AnyMachineSnapshot) {
    const { api } = ui;
    const e = event as AnyEventObject & { id?: string; via?: string; event?: JobEvent };
    switch (event.type) {
      case 'STREAM.OPENED':
        ui.writer = (await api.stream('GET', EVENTS)).writer;
        // Heartbeats are comments: nothing happens.
        ui.writer.raw(': ping\n\n');
        return;
      case 'STREAM.READY':
        return ui.writer!.raw(`id: ${e.id!}\nevent: ready\ndata: {}\n\n`);
      case 'STREAM.EVENT': {
        // Happened on the server first: the list read after it shows it too.
        ui.server.delivered = Math.max(ui.server.delivered, SCRIPT.findIndex((s) => s.id === e.id) + 1);
        // A frame may arrive in pieces.
        const frame = `id: ${e.id!}\nevent: job\ndata: ${JSON.stringify(e.event)}\n\n`;
        ui.writer!.raw(frame.slice(0, 20));
        return ui.writer!.raw(frame.slice(20));
      }
      case 'STREAM.FAILED':
        if (before.matches({ live: 'connecting' })) {
          if (e.via === 'refused') await api.answer('GET', EVENTS, { status: 503 });
          else await api.breakConnection('GET', EVENTS);
        } else if (e.via === 'broken') ui.writer!.fail();
        else ui.writer!.end();
        ui.writer = null;
        return;
      case 'STREAM.UNAUTHORIZED':
        await api.answer('GET', EVENTS, apiError(401, 'UNAUTHORIZED', 'Unauthorized access'));
        return;
      case 'RETRY':
        return ui.user.click(within(panel()).getByRole('button', { name: TEXT[ui.lang].reconnect }));
      default:
      // The pause is over by itself: the row waits for the new connection.
    }
  },
  sees: [
    [
      { live: 'connecting' },
      {
        says: 'issue #28 item 4: connecting (again after a failure), asking from the last event seen',
        check: (ui: StreamUi, reached: Reached) => {
          const f = factsOf(reached.events);
          const text = TEXT[reached.lang];
          expect(status().textContent).toBe(f.failures === 0 ? text.connecting : text.lost);
          expect(ui.api.isHeld('GET', EVENTS), 'a connection is being made').toBe(true);
          connectionAsked(ui, f);
          jobsShow(f, reached.lang);
        },
      },
    ],
    [
      { live: 'open' },
      {
        says: 'issue #28 items 3/4: live; every event shown once, in order, the list right',
        check: (ui: StreamUi, reached: Reached) => {
          const f = factsOf(reached.events);
          expect(status().textContent).toBe(TEXT[reached.lang].open);
          connectionAsked(ui, f);
          jobsShow(f, reached.lang);
        },
      },
    ],
    [
      'waiting',
      {
        says: 'issue #28 item 4: the connection dropped: said so, with Reconnect now, and made again after a pause',
        check: (ui: StreamUi, reached: Reached) => {
          const f = factsOf(reached.events);
          const text = TEXT[reached.lang];
          expect(status().textContent).toBe(`${text.lost}${text.reconnect}`);
          expect(ui.api.isHeld('GET', EVENTS)).toBe(false);
          jobsShow(f, reached.lang);
        },
      },
    ],
    [
      'signedOut',
      {
        says: 'contract: 401 when signed out: the session ends, the sign-in page remembers the page',
        check: (ui: StreamUi, reached: Reached) => {
          expect(factsOf(reached.events).signedOut).toBe(true);
          expect(ui.location()).toBe('/login?redirect=%2Fdashboard');
          expect(screen.getByTestId('session-ended').textContent).toBe(TEXT[reached.lang].sessionEnded);
          expect(screen.queryByTestId('queue-panel')).toBeNull();
        },
      },
    ],
  ],
  always: {
    says: 'the header shows the balance the last event stated; one request per connection; no strays',
    check: (ui: StreamUi, reached: Reached) => {
      const f = factsOf(reached.events);
      expect(ui.api.strays()).toEqual([]);
      if (f.signedOut) return;
      expect(screen.getByTestId('token-balance').textContent).toBe(TEXT[reached.lang].tokens(f.balance));
      // React's development double mount asks once more at the start.
      const asked = ui.api.sent('GET', EVENTS).filter((r) => !r.signal?.aborted || r.answered).length;
      expect(asked).toBe(f.connections.length);
    },
  },
};

describeScreenModel('job stream', model);

describeInvariants('job stream', model, [
  {
    name: 'the last event id never goes back, and a repeated event changes nothing',
    step: (before, event, after) => {
      const was = ctx(before).lastEventId;
      const is = ctx(after).lastEventId;
      if (
        event.type === 'STREAM.EVENT' &&
        was !== null &&
        Number((event as unknown as { id: string }).id) <= Number(was)
      ) {
        return JSON.stringify(before.context) === JSON.stringify(after.context);
      }
      return was === null || (is !== null && Number(is) >= Number(was));
    },
  },
  {
    name: 'a 401 is never retried',
    state: (snapshot) => !snapshot.matches('signedOut') || snapshot.status === 'done',
  },
  {
    name: 'an opened connection starts the pauses afresh',
    step: (_before, event, after) => event.type !== 'STREAM.OPENED' || ctx(after).failures === 0,
  },
]);

describe('job stream: resuming after a dropped connection', () => {
  afterEach(() => cleanup());

  it("a chat reply's event on the same stream moves the id to resume from (issue #28 item 5 shares it)", async () => {
    const ui = await model.open('en');
    try {
      const first = await ui.api.stream('GET', EVENTS);
      first.writer.raw(`id: ${READY_ID}\nevent: ready\ndata: {}\n\n`);
      first.writer.raw(
        'id: 41\nevent: reply\ndata: {"conversationId":3,"requestId":9,"model":"gpt-4o","content":"Hel","done":false}\n\n',
      );
      first.writer.end();
      await ui.user.click(await within(panel()).findByRole('button', { name: TEXT.en.reconnect }));
      const second = await ui.api.stream('GET', EVENTS);
      expect(second.request.headers.get('Last-Event-ID')).toBe('41');
    } finally {
      model.close!(ui);
    }
  });

  it.each(['ru', 'en'] as const)(
    "[%s] issue #28 item 5: a chat reply's end on the stream brings its balance to the header on any screen, once",
    async (lang) => {
      const ui = await model.open(lang);
      try {
        const first = await ui.api.stream('GET', EVENTS);
        first.writer.raw(`id: ${READY_ID}\nevent: ready\ndata: {}\n\n`);
        const reply = (id: string, content: string, balance?: number) =>
          `id: ${id}\nevent: reply\ndata: ${JSON.stringify({
            conversationId: 3,
            requestId: 9,
            model: 'gpt-4o',
            content,
            done: balance !== undefined,
            ...(balance === undefined
              ? {}
              : {
                  message: {
                    id: 77,
                    role: 'assistant',
                    content,
                    model: 'gpt-4o',
                    tokensUsed: 30,
                    createdAt: '2026-11-27T10:00:00.000Z',
                  },
                  balance,
                }),
          })}\n\n`;
        // Written in another tab: its words say nothing to the header, its end states the bill.
        first.writer.raw(reply('41', 'Hel'));
        first.writer.raw(reply('42', 'Hello there.', 37));
        await waitFor(() => expect(screen.getByTestId('token-balance').textContent).toBe(TEXT[lang].tokens(37)));
        // A frame seen already (a replay) changes nothing.
        first.writer.raw(reply('42', 'Hello there.', 12));
        first.writer.end();
        await ui.user.click(await within(panel()).findByRole('button', { name: TEXT[lang].reconnect }));
        const second = await ui.api.stream('GET', EVENTS);
        expect(second.request.headers.get('Last-Event-ID')).toBe('42');
        expect(screen.getByTestId('token-balance').textContent).toBe(TEXT[lang].tokens(37));
      } finally {
        model.close!(ui);
      }
    },
  );

  it.each(['ru', 'en'] as const)(
    '[%s] issue #28 item 4: the reconnection asks from the last event, the replay shows each event once',
    async (lang) => {
      const ui = await model.open(lang);
      try {
        const frame = (i: number) => `id: ${SCRIPT[i]!.id}\nevent: job\ndata: ${JSON.stringify(SCRIPT[i]!.event)}\n\n`;
        const first = await ui.api.stream('GET', EVENTS);
        expect(first.request.headers.get('Last-Event-ID')).toBeNull();
        first.writer.raw(`id: ${READY_ID}\nevent: ready\ndata: {}\n\n`);
        ui.server.delivered = 2;
        first.writer.raw(frame(0) + frame(1));
        await waitFor(() => expect(within(panel()).getByTestId('job-8').getAttribute('data-state')).toBe('running'));
        // The connection drops; the portrait fails on the server meanwhile.
        first.writer.fail();
        ui.server.delivered = 3;
        await ui.user.click(await within(panel()).findByRole('button', { name: TEXT[lang].reconnect }));
        const second = await ui.api.stream('GET', EVENTS);
        expect(second.request.headers.get('Last-Event-ID')).toBe('42');
        // What the server replays: the event missed, and (wrongly) one already seen.
        second.writer.raw(frame(1) + frame(2) + frame(2));
        await waitFor(() => expect(within(panel()).getByTestId('job-8').getAttribute('data-state')).toBe('failed'));
        jobsShow(factsOf(SCRIPT.map((s) => ({ type: 'STREAM.EVENT', id: s.id }))), lang);
        // The portrait failed while the dashboard (generations) was on screen: one notification.
        await waitFor(() => expect(document.querySelectorAll('[data-kind="error"]')).toHaveLength(1));
        expect(screen.getByTestId('token-balance').textContent).toBe(TEXT[lang].tokens(50));
      } finally {
        model.close!(ui);
      }
    },
  );
});
