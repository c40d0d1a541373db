import { assign, enqueueActions, fromCallback, fromPromise, setup, type ActorRefFrom } from 'xstate';
import { balanceOf, problemOf as problemFrom } from '../domain/errors';
import {
  DEFAULT_PORTRAIT_ASPECT_RATIO,
  portraitImageOf,
  uploadProblem,
  validatePortrait,
  PORTRAIT_SCREEN_OUTPUT_FORMAT,
  PORTRAIT_SCREEN_STYLE_PRESET,
  portraitMessages,
  type PortraitImage,
  type PortraitProblem,
  type PortraitResultData,
} from '../domain/portraits';
import type { QueueRef } from './queue';
import { chargeEvent, type sessionMachine } from './session';

/** The chosen photo: what the preview shows, and the file itself (opaque to the machine). */
export interface ChosenPhoto {
  name: string;
  size: number;
  type: string;
  /** The browser's File; only the API actor reads it. */
  file: unknown;
  /** An object URL made by the view for the preview; released by `releasePreview`. */
  previewUrl: string;
}

export type PortraitTab = 'male' | 'female';

export interface PortraitReply {
  success: true;
  data: PortraitResultData;
  tokens: { charged: number };
  /** The balance after the charge, as the server states it. */
  balanceAfter?: number;
  message: string;
}

/** What the screen posts (SPEC section 7): it fixes style_preset and output_format. */
export interface PortraitRequest {
  file: unknown;
  fileName: string;
  prompt: string;
  aspectRatio: string;
  stylePreset: string;
  outputFormat: string;
}

export interface PortraitContext {
  session: ActorRefFrom<typeof sessionMachine>;
  /** The job queue (issue #28): told to read the list again when a portrait goes to the background. */
  queue: QueueRef | null;
  balance: number;
  photo: ChosenPhoto | null;
  tab: PortraitTab;
  prompt: string;
  aspectRatio: string;
  result: PortraitImage | null;
  error: PortraitProblem | null;
}

export interface PortraitInputs {
  session: ActorRefFrom<typeof sessionMachine>;
  queue?: QueueRef | null;
  balance: number;
}

export type PortraitEvent =
  | { type: 'PHOTO.CHOOSE'; photo: ChosenPhoto }
  | { type: 'PHOTO.CLEAR' }
  | { type: 'TAB.SELECT'; tab: PortraitTab }
  | { type: 'TEMPLATE.APPLY'; prompt: string }
  | { type: 'PROMPT.CHANGE'; value: string }
  | { type: 'ASPECT.CHANGE'; value: string }
  | { type: 'SUBMIT' }
  /** Issue #28: "Run in background" while the portrait is made: the job goes on, the form is free. */
  | { type: 'RUN_IN_BACKGROUND' }
  | { type: 'BALANCE.SYNC'; balance: number }
  | { type: 'DOWNLOAD'; image: PortraitImage };

/** SPEC section 5's first failing portrait rule for the form, or null. */
export function portraitProblem(
  context: Pick<PortraitContext, 'photo' | 'prompt' | 'balance'>,
): PortraitProblem | null {
  return validatePortrait({ hasPhoto: context.photo !== null, prompt: context.prompt }, context.balance);
}

export function requestOf(context: PortraitContext): PortraitRequest {
  return {
    file: context.photo?.file,
    fileName: context.photo?.name ?? 'photo',
    prompt: context.prompt,
    aspectRatio: context.aspectRatio,
    stylePreset: PORTRAIT_SCREEN_STYLE_PRESET,
    outputFormat: PORTRAIT_SCREEN_OUTPUT_FORMAT,
  };
}

/** Turns whatever the API actor threw into a problem the screen can word. */
export function problemOf(error: unknown): PortraitProblem {
  return problemFrom(error, { code: 'PROVIDER_ERROR', message: portraitMessages.failure });
}

/**
 * The portrait creator (SPEC sections 2, 4, 5): no photo -> photo chosen -> generating ->
 * result | error. A file is checked as it is chosen (size, then type); SUBMIT checks
 * SPEC's rules in order (photo, prompt, balance); while generating the form is disabled
 * (every edit is ignored). The header balance drops by tokens.charged.
 */
export const portraitMachine = setup({
  // Stryker disable all: type declarations only, erased when the code runs
  types: {
    context: {} as PortraitContext,
    events: {} as PortraitEvent,
    input: {} as PortraitInputs,
  },
  // Stryker restore all
  actors: {
    // Stryker disable all: a placeholder; the app and every test provide this actor
    createPortrait: fromPromise<PortraitReply, PortraitRequest>(() =>
      Promise.reject(new Error('createPortrait not provided')),
    ),
    // Stryker restore all
    /** Keeps the balance in step with the session's (the header's). */
    watchBalance: fromCallback<PortraitEvent, { session: PortraitContext['session'] }>(({ input, sendBack }) => {
      const subscription = input.session.subscribe((snapshot) => {
        const balance = snapshot.context.user?.tokensAmount;
        if (balance !== undefined) sendBack({ type: 'BALANCE.SYNC', balance });
      });
      return () => subscription.unsubscribe();
    }),
  },
  actions: {
    /** Releases a preview's object URL; provided by src/api. */
    releasePreview: (_, _params: { url: string }) => {},
    /** Saves the portrait; provided by src/api. */
    downloadImage: (_, _params: { image: PortraitImage }) => {},
    setPhoto: assign((_, params: { photo: ChosenPhoto }) => ({ photo: params.photo, error: null })),
    clearPhoto: assign({ photo: null, error: null }),
    rejectFile: assign((_, params: { photo: ChosenPhoto }) => ({ error: uploadProblem(params.photo) })),
    setTab: assign((_, params: { tab: PortraitTab }) => ({ tab: params.tab })),
    setPrompt: assign((_, params: { prompt: string }) => ({ prompt: params.prompt })),
    setAspect: assign((_, params: { value: string }) => ({ aspectRatio: params.value })),
    setBalance: assign((_, params: { balance: number }) => ({ balance: Math.max(0, params.balance) })),
    showProblem: assign(({ context }) => ({ error: portraitProblem(context) })),
    clearError: assign({ error: null }),
    acceptResult: assign(({ context }, params: { reply: PortraitReply }) => ({
      result: portraitImageOf(params.reply.data),
      balance: Math.max(0, params.reply.balanceAfter ?? context.balance - params.reply.tokens.charged),
    })),
    /** The header takes the server's figure, else the old one less tokens.charged. */
    reportCharge: enqueueActions(({ context, enqueue }, params: { reply: PortraitReply }) => {
      enqueue.sendTo(context.session, chargeEvent(params.reply));
    }),
    setError: assign((_, params: { error: unknown }) => ({ error: problemOf(params.error) })),
    /** The queue reads its list again: the job just left in the background is on it. */
    tellQueue: enqueueActions(({ context, enqueue }) => {
      if (context.queue) enqueue.sendTo(context.queue, { type: 'JOBS.REFRESH' });
    }),
    /** A refusal states the balance: the form and the header take it. */
    reportRefusal: enqueueActions(({ context, enqueue }) => {
      const balance = balanceOf(context.error);
      if (balance === undefined) return;
      enqueue.assign({ balance });
      enqueue.sendTo(context.session, { type: 'BALANCE.CHANGED', balance });
    }),
  },
  guards: {
    fileAcceptable: (_, params: { photo: ChosenPhoto }) => uploadProblem(params.photo) === null,
    formValid: ({ context }) => portraitProblem(context) === null,
  },
}).createMachine({
  id: 'portrait',
  context: ({ input }) => ({
    session: input.session,
    queue: input.queue ?? null,
    balance: input.balance,
    photo: null,
    tab: 'female',
    prompt: '',
    aspectRatio: DEFAULT_PORTRAIT_ASPECT_RATIO,
    result: null,
    error: null,
  }),
  invoke: { src: 'watchBalance', input: ({ context }) => ({ session: context.session }) },
  on: {
    'BALANCE.SYNC': { actions: { type: 'setBalance', params: ({ event }) => ({ balance: event.balance }) } },
    DOWNLOAD: { actions: { type: 'downloadImage', params: ({ event }) => ({ image: event.image }) } },
  },
  initial: 'editable',
  states: {
    // The form answers in every state but generating.
    editable: {
      on: {
        'PHOTO.CHOOSE': [
          {
            guard: { type: 'fileAcceptable', params: ({ event }) => ({ photo: event.photo }) },
            target: '.photoChosen',
            actions: [
              { type: 'releasePreview', params: ({ context }) => ({ url: context.photo?.previewUrl ?? '' }) },
              { type: 'setPhoto', params: ({ event }) => ({ photo: event.photo }) },
            ],
          },
          {
            target: '.error',
            actions: [
              { type: 'releasePreview', params: ({ event }) => ({ url: event.photo.previewUrl }) },
              { type: 'rejectFile', params: ({ event }) => ({ photo: event.photo }) },
            ],
          },
        ],
        'PHOTO.CLEAR': {
          target: '.noPhoto',
          actions: [
            { type: 'releasePreview', params: ({ context }) => ({ url: context.photo?.previewUrl ?? '' }) },
            'clearPhoto',
          ],
        },
        'TAB.SELECT': { actions: { type: 'setTab', params: ({ event }) => ({ tab: event.tab }) } },
        'TEMPLATE.APPLY': { actions: { type: 'setPrompt', params: ({ event }) => ({ prompt: event.prompt }) } },
        'PROMPT.CHANGE': { actions: { type: 'setPrompt', params: ({ event }) => ({ prompt: event.value }) } },
        'ASPECT.CHANGE': { actions: { type: 'setAspect', params: ({ event }) => ({ value: event.value }) } },
        SUBMIT: [
          { guard: 'formValid', target: 'generating' },
          { target: '.error', actions: 'showProblem' },
        ],
      },
      initial: 'noPhoto',
      states: {
        noPhoto: {},
        photoChosen: {},
        result: {},
        error: {},
      },
    },
    generating: {
      entry: 'clearError',
      invoke: {
        src: 'createPortrait',
        input: ({ context }) => requestOf(context),
        onDone: {
          target: 'editable.result',
          actions: [
            { type: 'acceptResult', params: ({ event }) => ({ reply: event.output }) },
            { type: 'reportCharge', params: ({ event }) => ({ reply: event.output }) },
          ],
        },
        onError: {
          target: 'editable.error',
          actions: [{ type: 'setError', params: ({ event }) => ({ error: event.error }) }, 'reportRefusal'],
        },
      },
      // Leaving stops the request (the server's job goes on and shows in the queue); photo and prompt stay.
      on: { RUN_IN_BACKGROUND: { target: 'editable.photoChosen', actions: 'tellQueue' } },
    },
  },
});

export type PortraitRef = ActorRefFrom<typeof portraitMachine>;
