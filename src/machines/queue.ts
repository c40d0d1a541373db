import {
  assign,
  emit,
  fromCallback,
  fromPromise,
  sendTo,
  setup,
  spawnChild,
  stopChild,
  type ActorRefFrom,
} from 'xstate';
import { genericMessages, problemOf, type Problem } from '../domain/errors';
import { finishesNow, orderJobs, placeJob } from '../domain/job-list';
import { isActiveJobState, type Job, type JobEvent, type JobKind, type JobList, type ReplyEvent } from '../domain/jobs';
import { jobStreamMachine, type JobStreamNotice } from './job-stream';
import type { SessionRef } from './session';

/** A job's Cancel: waiting for the server, or refused (the problem shown under the job). */
export type CancelState = { status: 'pending' } | { status: 'failed'; problem: Problem };

export interface QueueContext {
  /** The session actor: it takes the balance each event and cancel states. */
  session: SessionRef;
  /** The user's jobs as the list was last read, with every event and cancel since applied. */
  jobs: Job[];
  perUserLimit: number | null;
  /** Why the list could not be read (state `list.failed`). */
  problem: Problem | null;
  /** Cancels by job id. */
  cancels: Record<string, CancelState>;
  /** The screen showing the jobs of this kind (the dashboard: generation; the portrait creator: portrait). */
  screen: JobKind | null;
  /** Jobs that completed, and that failed, while the tab was hidden: the page title says so. */
  unseen: { completed: number; failed: number };
}

export interface QueueInput {
  session: SessionRef;
}

export type QueueEvent =
  | JobStreamNotice
  /** Read the list again: Run in background on a form, the panel's refresh button. */
  | { type: 'JOBS.REFRESH' }
  | { type: 'JOBS.RETRY' }
  | { type: 'JOB.CANCEL'; id: number }
  | { type: 'CANCEL.DONE'; id: number; job: Job; balance: number }
  | { type: 'CANCEL.FAILED'; id: number; problem: Problem }
  | { type: 'PANEL.OPEN' }
  | { type: 'PANEL.CLOSE' }
  | { type: 'SCREEN.ENTER'; kind: JobKind }
  | { type: 'SCREEN.LEAVE'; kind: JobKind }
  | { type: 'TAB.HIDDEN' }
  | { type: 'TAB.VISIBLE' };

/**
 * What the queue passes on to whoever listens (`queue.on(...)`): the chat's reply events, read
 * from the one event stream the queue holds (issue #28 item 5), so no feature opens a second.
 */
export type QueueEmitted = { type: 'REPLY.EVENT'; event: ReplyEvent };

/** The prefix the page title gets while the tab is hidden and jobs finished meanwhile. */
export function titleMark(unseen: QueueContext['unseen']): string {
  const count = unseen.completed + unseen.failed;
  if (count === 0) return '';
  return `(${count}) ${unseen.failed > 0 ? '⚠' : '✓'} `;
}

/** A failed request (the list, a cancel) as the screen words it: the server's code, else no answer. */
export function queueProblemOf(error: unknown): Problem {
  return problemOf(error, { code: 'NETWORK_ERROR', message: genericMessages.network });
}

const known = (context: QueueContext, id: number) => context.jobs.find((job) => job.id === id);
const cancelId = (id: number) => `cancel-${id}`;

// The actions of events handled alike in several states.
const applyEvent = [
  { type: 'placeJob', params: ({ event }: { event: { event: JobEvent } }) => ({ job: event.event.job }) },
  { type: 'tellBalance', params: ({ event }: { event: { event: JobEvent } }) => ({ balance: event.event.balance }) },
] as const;
type CancelDone = Extract<QueueEvent, { type: 'CANCEL.DONE' }>;
type CancelFailed = Extract<QueueEvent, { type: 'CANCEL.FAILED' }>;
const cancelDone = [
  { type: 'setCancel', params: ({ event }: { event: CancelDone }) => ({ id: event.id, cancel: null }) },
  { type: 'placeJob', params: ({ event }: { event: CancelDone }) => ({ job: event.job }) },
  { type: 'tellBalance', params: ({ event }: { event: CancelDone }) => ({ balance: event.balance }) },
  'stopCancel',
] as const;
const cancelFailed = [
  {
    type: 'setCancel',
    params: ({ event }: { event: CancelFailed }) => ({
      id: event.id,
      cancel: { status: 'failed', problem: event.problem } as CancelState,
    }),
  },
  'stopCancel',
] as const;

/**
 * The queue of image and portrait jobs (issue #28 item 3), one actor for the whole signed-in
 * app (the header's count, the panels of the dashboard and the portrait creator):
 *
 * - `list`: GET /api/jobs, read again whenever the stream (re)connects or tells of a job
 *   (positions and estimates of the others move), each event's job shown at once;
 * - the job events' stream, invoked as its own chart (job-stream.ts), and each event's
 *   balance told to the session; a chat reply's event is passed on to listeners (the chat,
 *   through `queue.on('REPLY.EVENT')`) and the balance its end states told to the session;
 * - Cancel per job, each with its own pending and failure;
 * - `panel`: the header's dialog; a job finishing while its own screen is not showing and
 *   the dialog is closed is a notification (with a link to the image);
 * - `tab`: a job finishing while the tab is hidden marks the page title until it is seen.
 */
export const queueMachine = setup({
  // Stryker disable all: type declarations only, erased when the code runs
  types: {
    context: {} as QueueContext,
    events: {} as QueueEvent,
    input: {} as QueueInput,
    emitted: {} as QueueEmitted,
  },
  // Stryker restore all
  actors: {
    // Stryker disable all: placeholders; the app and every test provide these actors
    loadJobs: fromPromise<JobList>(() => Promise.reject(new Error('loadJobs not provided'))),
    cancelJob: fromCallback<QueueEvent, { id: number }>(() => () => {}),
    watchVisibility: fromCallback<QueueEvent>(() => () => {}),
    // Stryker restore all
    jobStream: jobStreamMachine,
  },
  actions: {
    /** Shows a notification for a job that finished out of sight; provided by the app's shell. */
    notify: (_, _params: { job: Job }) => {},
    /** Writes titleMark(unseen) before the page title; provided by src/api. */
    markTitle: (_, _params: { unseen: QueueContext['unseen'] }) => {},
    clearTitle: () => {},
    logFailure: (_, _params: { what: string; error: unknown }) => {},
    setList: assign((_, params: { list: JobList }) => ({
      jobs: orderJobs(params.list.jobs),
      perUserLimit: params.list.perUserLimit,
      problem: null,
    })),
    setProblem: assign((_, params: { error: unknown }) => ({
      problem: queueProblemOf(params.error),
    })),
    /** A job in its place at once (an event's, a cancel's). */
    placeJob: assign(({ context }, params: { job: Job }) => ({ jobs: placeJob(context.jobs, params.job) })),
    /** The balance the server stated (an event's, a cancel's) goes to the header. */
    tellBalance: sendTo(
      ({ context }) => context.session,
      (_, params: { balance: number }) => ({ type: 'BALANCE.CHANGED', balance: params.balance }),
    ),
    /** A chat reply's event goes to whoever listens (the chat screen). */
    passReply: emit((_, params: { event: ReplyEvent }) => ({ type: 'REPLY.EVENT' as const, event: params.event })),
    setCancel: assign(({ context }, params: { id: number; cancel: CancelState | null }) => {
      const { [params.id]: _previous, ...others } = context.cancels;
      return { cancels: params.cancel === null ? others : { ...others, [params.id]: params.cancel } };
    }),
    /** Each cancel is an actor of its own, named by its job. */
    spawnCancel: spawnChild('cancelJob', {
      id: ({ event }) => cancelId((event as Extract<QueueEvent, { type: 'JOB.CANCEL' }>).id),
      input: ({ event }) => ({ id: (event as Extract<QueueEvent, { type: 'JOB.CANCEL' }>).id }),
    }),
    stopCancel: stopChild(({ event }) => cancelId((event as CancelDone | CancelFailed).id)),
    setScreen: assign((_, params: { kind: JobKind }) => ({ screen: params.kind })),
    leaveScreen: assign(({ context }, params: { kind: JobKind }) => ({
      screen: context.screen === params.kind ? null : context.screen,
    })),
    countUnseen: assign(({ context }, params: { job: Job }) => ({
      unseen: {
        completed: context.unseen.completed + (params.job.state === 'completed' ? 1 : 0),
        failed: context.unseen.failed + (params.job.state === 'failed' ? 1 : 0),
      },
    })),
    forgetUnseen: assign({ unseen: { completed: 0, failed: 0 } }),
  },
  guards: {
    /** The event finishes a job (it was active, or unknown until now). */
    finishes: ({ context }, params: { job: Job }) => finishesNow(known(context, params.job.id), params.job),
    /**
     * It finishes while its own screen is not showing (whether the header's dialog shows it is
     * the state the guard is asked in).
     */
    finishesOutOfSight: ({ context }, params: { job: Job }) =>
      context.screen !== params.job.kind && finishesNow(known(context, params.job.id), params.job),
    cancellable: ({ context }, params: { id: number }) => {
      const job = known(context, params.id);
      return job !== undefined && isActiveJobState(job.state) && context.cancels[params.id]?.status !== 'pending';
    },
    sawUnseen: ({ context }) => context.unseen.completed + context.unseen.failed > 0,
    /** A reply's end states the balance after its bill. */
    statesBalance: (_, params: { event: ReplyEvent }) => params.event.balance !== undefined,
  },
}).createMachine({
  id: 'queue',
  type: 'parallel',
  context: ({ input }) => ({
    session: input.session,
    jobs: [],
    perUserLimit: null,
    problem: null,
    cancels: {},
    screen: null,
    unseen: { completed: 0, failed: 0 },
  }),
  invoke: [{ src: 'jobStream', id: 'stream', input: ({ self }) => ({ listener: self }) }, { src: 'watchVisibility' }],
  on: {
    // Issue #28 item 5: the header follows a reply's bill whichever tab or screen shows it.
    'REPLY.EVENT': [
      {
        guard: { type: 'statesBalance', params: ({ event }) => ({ event: event.event }) },
        actions: [
          { type: 'passReply', params: ({ event }) => ({ event: event.event }) },
          { type: 'tellBalance', params: ({ event }) => ({ balance: event.event.balance ?? 0 }) },
        ],
      },
      { actions: { type: 'passReply', params: ({ event }) => ({ event: event.event }) } },
    ],
    'SCREEN.ENTER': { actions: { type: 'setScreen', params: ({ event }) => ({ kind: event.kind }) } },
    'SCREEN.LEAVE': { actions: { type: 'leaveScreen', params: ({ event }) => ({ kind: event.kind }) } },
  },
  states: {
    list: {
      initial: 'loading',
      on: {
        // A job changed: shown at once in every state of the list.
        'JOB.EVENT': { actions: applyEvent },
        'CANCEL.DONE': { actions: cancelDone },
        'CANCEL.FAILED': { actions: cancelFailed },
      },
      states: {
        loading: {
          invoke: {
            src: 'loadJobs',
            onDone: { target: 'ready', actions: { type: 'setList', params: ({ event }) => ({ list: event.output }) } },
            onError: {
              target: 'failed',
              actions: [
                { type: 'setProblem', params: ({ event }) => ({ error: event.error }) },
                { type: 'logFailure', params: ({ event }) => ({ what: 'job list', error: event.error }) },
              ],
            },
          },
          // The stream opened after the list was asked for: read it again, so nothing between is missed.
          on: { 'STREAM.CONNECTED': { target: 'loading', reenter: true } },
        },
        failed: {
          on: { 'JOBS.RETRY': 'loading', 'JOBS.REFRESH': 'loading', 'STREAM.CONNECTED': 'loading' },
        },
        ready: {
          initial: 'idle',
          on: {
            'JOB.EVENT': { target: '.refreshing', reenter: true, actions: applyEvent },
            'STREAM.CONNECTED': { target: '.refreshing', reenter: true },
            'JOBS.REFRESH': { target: '.refreshing', reenter: true },
            'JOB.CANCEL': {
              guard: { type: 'cancellable', params: ({ event }) => ({ id: event.id }) },
              actions: [
                { type: 'setCancel', params: ({ event }) => ({ id: event.id, cancel: { status: 'pending' } }) },
                'spawnCancel',
              ],
            },
            // The other jobs' places move after a cancel; a refused one shows the job as it is now.
            'CANCEL.DONE': { target: '.refreshing', reenter: true, actions: cancelDone },
            'CANCEL.FAILED': { target: '.refreshing', reenter: true, actions: cancelFailed },
          },
          states: {
            idle: {},
            refreshing: {
              invoke: {
                src: 'loadJobs',
                onDone: {
                  target: 'idle',
                  actions: { type: 'setList', params: ({ event }) => ({ list: event.output }) },
                },
                // The list on screen stays; the next event or reconnection reads it again.
                onError: {
                  target: 'idle',
                  actions: { type: 'logFailure', params: ({ event }) => ({ what: 'job list', error: event.error }) },
                },
              },
            },
          },
        },
      },
    },
    panel: {
      initial: 'closed',
      states: {
        closed: {
          on: {
            'PANEL.OPEN': 'open',
            'JOB.EVENT': {
              guard: { type: 'finishesOutOfSight', params: ({ event }) => ({ job: event.event.job }) },
              actions: { type: 'notify', params: ({ event }) => ({ job: event.event.job }) },
            },
          },
        },
        open: { on: { 'PANEL.CLOSE': 'closed' } },
      },
    },
    tab: {
      initial: 'visible',
      states: {
        visible: { on: { 'TAB.HIDDEN': 'hidden' } },
        hidden: {
          on: {
            'TAB.VISIBLE': [
              { guard: 'sawUnseen', target: 'visible', actions: ['forgetUnseen', 'clearTitle'] },
              { target: 'visible' },
            ],
            'JOB.EVENT': {
              guard: { type: 'finishes', params: ({ event }) => ({ job: event.event.job }) },
              actions: [
                { type: 'countUnseen', params: ({ event }) => ({ job: event.event.job }) },
                { type: 'markTitle', params: ({ context }) => ({ unseen: context.unseen }) },
              ],
            },
          },
        },
      },
    },
  },
});

export type QueueRef = ActorRefFrom<typeof queueMachine>;
