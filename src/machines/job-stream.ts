import { assign, enqueueActions, fromCallback, setup, type ActorRef, type Snapshot } from 'xstate';
import type { JobEvent, ReplyEvent } from '../domain/jobs';

/** What the connection (an actor of src/api reading GET /api/events) sends back. */
export type JobStreamEvent =
  /** The server answered 200: events follow (after Last-Event-ID, replayed in order). */
  | { type: 'STREAM.OPENED' }
  /**
   * A frame that carries nothing to tell: the first of a connection made without
   * Last-Event-ID (`ready`), or an event this reader does not know. Only its id counts.
   */
  | { type: 'STREAM.READY'; id: string | null }
  | { type: 'STREAM.EVENT'; id: string | null; event: JobEvent }
  /** A chat reply as it is written (issue #28 item 5), from whichever tab or instance started it. */
  | { type: 'STREAM.REPLY'; id: string | null; event: ReplyEvent }
  /** The connection failed, broke or ended: it is made again after a pause. */
  | { type: 'STREAM.FAILED' }
  /** 401: the session ended; nothing is retried. */
  | { type: 'STREAM.UNAUTHORIZED' }
  /** The person asks to reconnect now rather than after the pause. */
  | { type: 'RETRY' };

/** What the stream tells the actor that started it (the queue, which passes replies on to the chat). */
export type JobStreamNotice =
  { type: 'STREAM.CONNECTED' } | { type: 'JOB.EVENT'; event: JobEvent } | { type: 'REPLY.EVENT'; event: ReplyEvent };

/**
 * Whoever is told of each event and connection: the queue that invokes the stream, named by
 * what it takes rather than by its machine, which itself names this one (queue.ts imports it).
 */
export type JobStreamListener = ActorRef<Snapshot<unknown>, JobStreamNotice>;

export interface JobStreamContext {
  listener: JobStreamListener | null;
  /** The id of the last event seen, sent as Last-Event-ID when the stream is made again. */
  lastEventId: string | null;
  /** Connections failed in a row since the last one that opened. */
  failures: number;
}

export interface ConnectInput {
  lastEventId: string | null;
}

/** The first pause before reconnecting; each failure in a row doubles it, up to RETRY_MAX_MS. */
export const RETRY_FIRST_MS = 1000;
export const RETRY_MAX_MS = 30_000;

/** The pause after `failures` failed connections in a row (1 s, 2 s, 4 s … 30 s). */
export function retryDelayMs(failures: number): number {
  return Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** Math.max(0, failures - 1));
}

const DIGITS = /^\d+$/;

/**
 * The server's ids are digits, growing per user: an event at or below the last one seen was
 * delivered already. One that cannot be placed (no id seen yet, or an id of another form)
 * is shown rather than lost.
 */
function isAfter(id: string | null, last: string | null): boolean {
  if (!DIGITS.test(String(id)) || !DIGITS.test(String(last))) return true;
  return Number(id) > Number(last);
}

/**
 * The user's event stream (issue #28 item 4) as states: connecting, open, waiting to retry
 * with a growing pause, and signed out (401: the session ended, no retry). It remembers the
 * last event id and sends it on every reconnect, so the server replays what was missed once
 * and in order; an event it has already seen is dropped. The actor that invokes it (the
 * queue) is told each job event, each chat reply event (item 5: the queue passes them on to
 * the chat) and each (re)connection, after which it reads the list again.
 */
export const jobStreamMachine = setup({
  // Stryker disable all: type declarations only, erased when the code runs
  types: {
    context: {} as JobStreamContext,
    events: {} as JobStreamEvent,
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- xstate takes the input type from it
    input: {} as { listener?: JobStreamListener | null; lastEventId?: string | null },
  },
  // Stryker restore all
  // Stryker disable all: a placeholder; the app and every test provide this actor
  actors: {
    connect: fromCallback<JobStreamEvent, ConnectInput>(() => () => {}),
  },
  // Stryker restore all
  actions: {
    remember: assign((_, params: { id: string | null }) => (params.id === null ? {} : { lastEventId: params.id })),
    countFailure: assign(({ context }) => ({ failures: context.failures + 1 })),
    resetFailures: assign({ failures: 0 }),
    tell: enqueueActions(({ context, enqueue }, params: { notice: JobStreamNotice }) => {
      if (context.listener) enqueue.sendTo(context.listener, params.notice);
    }),
  },
  guards: {
    isNew: ({ context }, params: { id: string | null }) => isAfter(params.id, context.lastEventId),
  },
  delays: {
    backoff: ({ context }) => retryDelayMs(context.failures),
  },
}).createMachine({
  id: 'job-stream',
  context: ({ input }) => ({ listener: input.listener ?? null, lastEventId: input.lastEventId ?? null, failures: 0 }),
  initial: 'live',
  states: {
    live: {
      invoke: { src: 'connect', input: ({ context }) => ({ lastEventId: context.lastEventId }) },
      initial: 'connecting',
      on: {
        'STREAM.READY': { actions: { type: 'remember', params: ({ event }) => ({ id: event.id }) } },
        'STREAM.EVENT': {
          guard: { type: 'isNew', params: ({ event }) => ({ id: event.id }) },
          actions: [
            { type: 'remember', params: ({ event }) => ({ id: event.id }) },
            { type: 'tell', params: ({ event }) => ({ notice: { type: 'JOB.EVENT', event: event.event } }) },
          ],
        },
        'STREAM.REPLY': {
          guard: { type: 'isNew', params: ({ event }) => ({ id: event.id }) },
          actions: [
            { type: 'remember', params: ({ event }) => ({ id: event.id }) },
            { type: 'tell', params: ({ event }) => ({ notice: { type: 'REPLY.EVENT', event: event.event } }) },
          ],
        },
        'STREAM.FAILED': { target: 'waiting', actions: 'countFailure' },
        'STREAM.UNAUTHORIZED': 'signedOut',
      },
      states: {
        connecting: {
          on: {
            'STREAM.OPENED': {
              target: 'open',
              actions: ['resetFailures', { type: 'tell', params: { notice: { type: 'STREAM.CONNECTED' } } }],
            },
          },
        },
        open: {},
      },
    },
    waiting: {
      after: { backoff: 'live' },
      on: { RETRY: 'live' },
    },
    signedOut: { type: 'final' },
  },
});
