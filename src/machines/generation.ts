// One file: one feature, one chart (the project's rule): the form, its checks in SPEC's order, the
// loader, the result and the modal are one flow.
import { and, assign, enqueueActions, fromCallback, fromPromise, not, setup, stateIn, type ActorRefFrom } from 'xstate';
import { balanceOf, problemOf, type Problem } from '../domain/errors';
import {
  buildGenerationRequest,
  canSubmitGeneration,
  DEFAULT_ASPECT_RATIO,
  DEFAULT_SD3_VARIANT,
  DEFAULT_SDXL_SIZE,
  formatImageSize,
  generationMessages,
  generationProblem,
  IMAGE_MODELS,
  isImageModelId,
  type GenerationBody,
  type GenerationInput,
  type ImageModelId,
} from '../domain/images';
import { DASHBOARD_PREVIEW_LIMIT, type GenerationReply, type ImageRecord } from '../domain/image-record';
import type { QueueRef } from './queue';
import { chargeEvent, type sessionMachine } from './session';

/** The form as the user edits it: free text, checked only by validateGeneration. */
export interface GenerationForm {
  model: string;
  prompt: string;
  negativePrompt: string;
  size: string;
  aspectRatio: string;
  stylePreset: string;
  sd3Model: string;
  seed: string;
}

export type GenerationField = keyof GenerationForm;

export const MOTIVATIONAL_PHRASE_COUNT = 31;
/** The loader's bar creeps towards this and reaches 100 only when the image is there. */
export const PROGRESS_CEILING = 95;

export interface GenerationContext {
  session: ActorRefFrom<typeof sessionMachine>;
  /** The job queue (issue #28): told to read the list again when a generation goes to the background. */
  queue: QueueRef | null;
  balance: number;
  form: GenerationForm;
  lastSeed: number | null;
  current: ImageRecord | null;
  /** The failure shown under the form: a rule of SPEC section 5, a refusal, or the server's. */
  error: Problem | null;
  recent: ImageRecord[];
  selected: ImageRecord | null;
  progress: number;
  phrase: number;
}

export interface GenerationInputs {
  session: ActorRefFrom<typeof sessionMachine>;
  queue?: QueueRef | null;
  balance: number;
  /** Carried by Regenerate (/dashboard?prompt=...). */
  prompt?: string;
  /** Regenerate's other parameters (model, size or ratio, style, negative prompt, variant, seed). */
  preset?: Partial<GenerationForm>;
}

export type GenerationEvent =
  | { type: 'FIELD.CHANGE'; field: GenerationField; value: string }
  | { type: 'TEMPLATE.APPLY'; prompt: string }
  | { type: 'PROMPT.SET'; prompt: string }
  /** Regenerate: the form starts from every parameter of an image. */
  | { type: 'FORM.PRESET'; values: Partial<GenerationForm> }
  | { type: 'SEED.USE_LAST' }
  | { type: 'SUBMIT' }
  /** Issue #28: the loader's "Run in background": the job goes on, the form is free again. */
  | { type: 'RUN_IN_BACKGROUND' }
  | { type: 'TICK' }
  | { type: 'BALANCE.SYNC'; balance: number }
  | { type: 'RECENT.RELOAD' }
  | { type: 'IMAGE.OPEN'; image: ImageRecord }
  | { type: 'IMAGE.CLOSE' }
  | { type: 'DOWNLOAD'; image: ImageRecord }
  | { type: 'COPY_PROMPT'; prompt: string };

export interface GenerateRequest {
  endpoint: string;
  body: GenerationBody;
}

export const initialForm = (prompt = ''): GenerationForm => ({
  model: 'original',
  prompt,
  negativePrompt: '',
  size: formatImageSize(DEFAULT_SDXL_SIZE),
  aspectRatio: DEFAULT_ASPECT_RATIO,
  stylePreset: 'none',
  sd3Model: DEFAULT_SD3_VARIANT,
  seed: '',
});

/**
 * Regenerate's URL parameters as form values: only the ones present, and a model only
 * when it is one of the catalogue's (the rest are checked by validateGeneration on submit).
 */
export function formPreset(search: {
  model?: string;
  size?: string;
  aspectRatio?: string;
  stylePreset?: string;
  negativePrompt?: string;
  variant?: string;
  seed?: string;
}): Partial<GenerationForm> {
  const preset: Partial<GenerationForm> = {};
  if (search.model !== undefined && isImageModelId(search.model)) preset.model = search.model;
  if (search.size !== undefined) preset.size = search.size;
  if (search.aspectRatio !== undefined) preset.aspectRatio = search.aspectRatio;
  if (search.stylePreset !== undefined) preset.stylePreset = search.stylePreset;
  if (search.negativePrompt !== undefined) preset.negativePrompt = search.negativePrompt;
  if (search.variant !== undefined) preset.sd3Model = search.variant;
  if (search.seed !== undefined) preset.seed = search.seed;
  return preset;
}

export function formInput(form: GenerationForm): GenerationInput {
  return { ...form, model: form.model as ImageModelId };
}

/** SPEC section 5's first failing rule for the form, or null. */
export function formProblem(context: Pick<GenerationContext, 'form' | 'balance'>): Problem | null {
  return generationProblem(formInput(context.form), context.balance);
}

/** SPEC: the button is disabled while generating, on a blank prompt, or when the balance is short. */
export function canSubmit(context: Pick<GenerationContext, 'form' | 'balance'>): boolean {
  return canSubmitGeneration(formInput(context.form), context.balance);
}

/** The balance does not cover the chosen model: the button says so and points to /billing. */
export function balanceShort(context: Pick<GenerationContext, 'form' | 'balance'>): boolean {
  return isImageModelId(context.form.model) && context.balance < IMAGE_MODELS[context.form.model].cost;
}

export function modelCost(model: string): number | null {
  return isImageModelId(model) ? IMAGE_MODELS[model].cost : null;
}

/**
 * SPEC section 4 "Generation" and the dashboard around it, as three orthogonal regions:
 * the generator (idle -> generating -> result | error), the latest-images preview, and
 * the image modal. The form lives in context; views send FIELD.CHANGE and SUBMIT.
 */
export const generationMachine = setup({
  // Stryker disable all: type declarations only, erased when the code runs
  types: {
    context: {} as GenerationContext,
    events: {} as GenerationEvent,
    input: {} as GenerationInputs,
  },
  // Stryker restore all
  actors: {
    // Stryker disable all: a placeholder; the app and every test provide this actor
    generate: fromPromise<GenerationReply, GenerateRequest>(() => Promise.reject(new Error('generate not provided'))),
    // Stryker restore all
    // Stryker disable all: a placeholder; the app and every test provide this actor
    loadRecent: fromPromise<ImageRecord[], { limit: number }>(() =>
      Promise.reject(new Error('loadRecent not provided')),
    ),
    // Stryker restore all
    /** Keeps the form's balance in step with the session's (the header's) balance. */
    watchBalance: fromCallback<GenerationEvent, { session: GenerationContext['session'] }>(({ input, sendBack }) => {
      const subscription = input.session.subscribe((snapshot) => {
        const balance = snapshot.context.user?.tokensAmount;
        if (balance !== undefined) sendBack({ type: 'BALANCE.SYNC', balance });
      });
      return () => subscription.unsubscribe();
    }),
    /** Moves the loader's bar while the request runs. */
    ticker: fromCallback<GenerationEvent>(({ sendBack }) => {
      const timer = setInterval(() => sendBack({ type: 'TICK' }), 400);
      return () => clearInterval(timer);
    }),
  },
  actions: {
    /** Saves the image as imagegen_{id}_{fileName}.jpg; provided by src/api. */
    downloadImage: (_, _params: { image: ImageRecord }) => {},
    /** Puts the prompt on the clipboard; provided by the screen. */
    copyPrompt: (_, _params: { prompt: string }) => {},
    /** SPEC: a failed image fetch is only logged. */
    logFailure: (_, _params: { what: string; error: unknown }) => {},
    /** The prompt as it is now, kept in case the session ends mid-work (issue #26). */
    keepDraft: (_, _params: { text: string }) => {},
    setField: assign(({ context }, params: { field: GenerationField; value: string }) => ({
      form: { ...context.form, [params.field]: params.value },
    })),
    setPrompt: assign(({ context }, params: { prompt: string }) => ({
      form: { ...context.form, prompt: params.prompt },
    })),
    preset: assign(({ context }, params: { values: Partial<GenerationForm> }) => ({
      form: { ...context.form, ...params.values },
    })),
    useLastSeed: assign(({ context }) => ({
      form: { ...context.form, seed: context.lastSeed === null ? context.form.seed : String(context.lastSeed) },
    })),
    setBalance: assign((_, params: { balance: number }) => ({ balance: Math.max(0, params.balance) })),
    showProblem: assign(({ context }) => ({ error: formProblem(context) })),
    startGenerating: assign(() => ({
      error: null,
      // A first step at once, so the bar visibly starts.
      progress: 5,
      phrase: Math.floor(Math.random() * MOTIVATIONAL_PHRASE_COUNT),
    })),
    creep: assign(({ context }) => ({
      progress: Math.min(PROGRESS_CEILING, context.progress + (PROGRESS_CEILING - context.progress) * 0.08),
    })),
    acceptResult: assign(({ context }, params: { reply: GenerationReply }) => ({
      current: params.reply.data,
      lastSeed: params.reply.data.seed ?? context.lastSeed,
      balance: Math.max(0, params.reply.balanceAfter ?? context.balance - params.reply.tokens.charged),
      recent: [params.reply.data, ...context.recent.filter((i) => i.id !== params.reply.data.id)].slice(
        0,
        DASHBOARD_PREVIEW_LIMIT,
      ),
      progress: 100,
    })),
    /**
     * The session (the header) takes the server's figure: the balance after the charge when
     * the reply states it, else the old figure less tokens.charged (SPEC section 4).
     */
    reportCharge: enqueueActions(({ context, enqueue }, params: { reply: GenerationReply }) => {
      enqueue.sendTo(context.session, chargeEvent(params.reply));
    }),
    setError: assign((_, params: { error: unknown }) => ({ error: failureOf(params.error) })),
    /** A refusal (402) or a failure states the balance: the session and the form take it. */
    reportRefusal: enqueueActions(({ context, enqueue }) => {
      const balance = balanceOf(context.error);
      if (balance === undefined) return;
      enqueue.assign({ balance });
      enqueue.sendTo(context.session, { type: 'BALANCE.CHANGED', balance });
    }),
    /** The queue reads its list again: the job just left in the background is on it. */
    tellQueue: enqueueActions(({ context, enqueue }) => {
      if (context.queue) enqueue.sendTo(context.queue, { type: 'JOBS.REFRESH' });
    }),
    setRecent: assign(({ context }, params: { images: ImageRecord[] }) => ({
      recent: params.images.slice(0, DASHBOARD_PREVIEW_LIMIT),
      // After a reload the last seed is the newest image's that has one (#26).
      lastSeed: context.lastSeed ?? params.images.find((image) => image.seed !== null)?.seed ?? null,
    })),
    select: assign((_, params: { image: ImageRecord }) => ({ selected: params.image })),
    unselect: assign({ selected: null }),
  },
  guards: {
    formValid: ({ context }) => formProblem(context) === null,
    hasLastSeed: ({ context }) => context.lastSeed !== null,
    editable: not(stateIn({ generator: 'generating' })),
  },
}).createMachine({
  id: 'generation',
  type: 'parallel',
  context: ({ input }) => ({
    session: input.session,
    queue: input.queue ?? null,
    balance: input.balance,
    form: { ...initialForm(input.prompt ?? ''), ...input.preset },
    lastSeed: null,
    current: null,
    error: null,
    recent: [],
    selected: null,
    progress: 0,
    phrase: 0,
  }),
  invoke: { src: 'watchBalance', input: ({ context }) => ({ session: context.session }) },
  states: {
    generator: {
      initial: 'idle',
      // The form answers in idle, result and error; while generating it is disabled.
      on: {
        'BALANCE.SYNC': { actions: { type: 'setBalance', params: ({ event }) => ({ balance: event.balance }) } },
        'FIELD.CHANGE': {
          guard: 'editable',
          actions: [
            { type: 'setField', params: ({ event }) => ({ field: event.field, value: event.value }) },
            { type: 'keepDraft', params: ({ context }) => ({ text: context.form.prompt }) },
          ],
        },
        'TEMPLATE.APPLY': {
          guard: 'editable',
          actions: [
            { type: 'setPrompt', params: ({ event }) => ({ prompt: event.prompt }) },
            { type: 'keepDraft', params: ({ context }) => ({ text: context.form.prompt }) },
          ],
        },
        'PROMPT.SET': {
          guard: 'editable',
          actions: [
            { type: 'setPrompt', params: ({ event }) => ({ prompt: event.prompt }) },
            { type: 'keepDraft', params: ({ context }) => ({ text: context.form.prompt }) },
          ],
        },
        'FORM.PRESET': {
          guard: 'editable',
          actions: [
            { type: 'preset', params: ({ event }) => ({ values: event.values }) },
            { type: 'keepDraft', params: ({ context }) => ({ text: context.form.prompt }) },
          ],
        },
        'SEED.USE_LAST': { guard: and(['editable', 'hasLastSeed']), actions: 'useLastSeed' },
        SUBMIT: [
          { guard: and(['editable', 'formValid']), target: '.generating' },
          { guard: 'editable', target: '.error', actions: 'showProblem' },
        ],
      },
      states: {
        idle: {},
        generating: {
          entry: 'startGenerating',
          invoke: [
            {
              src: 'generate',
              input: ({ context }) => buildGenerationRequest(formInput(context.form)),
              onDone: {
                target: 'result',
                actions: [
                  { type: 'acceptResult', params: ({ event }) => ({ reply: event.output }) },
                  { type: 'reportCharge', params: ({ event }) => ({ reply: event.output }) },
                ],
              },
              onError: {
                target: 'error',
                actions: [{ type: 'setError', params: ({ event }) => ({ error: event.error }) }, 'reportRefusal'],
              },
            },
            { src: 'ticker' },
          ],
          on: {
            TICK: { actions: 'creep' },
            // Leaving stops the request (the server's job goes on and shows in the queue).
            RUN_IN_BACKGROUND: { target: 'idle', actions: 'tellQueue' },
          },
        },
        result: {},
        error: {},
      },
    },
    recent: {
      initial: 'loading',
      states: {
        loading: {
          invoke: {
            src: 'loadRecent',
            input: { limit: DASHBOARD_PREVIEW_LIMIT },
            onDone: {
              target: 'ready',
              actions: { type: 'setRecent', params: ({ event }) => ({ images: event.output }) },
            },
            onError: {
              target: 'ready',
              actions: { type: 'logFailure', params: ({ event }) => ({ what: 'image fetch', error: event.error }) },
            },
          },
        },
        ready: { on: { 'RECENT.RELOAD': 'loading' } },
      },
    },
    modal: {
      initial: 'closed',
      // The result area and the modal both offer these, in any state.
      on: {
        DOWNLOAD: { actions: { type: 'downloadImage', params: ({ event }) => ({ image: event.image }) } },
        COPY_PROMPT: { actions: { type: 'copyPrompt', params: ({ event }) => ({ prompt: event.prompt }) } },
      },
      states: {
        closed: {
          on: {
            'IMAGE.OPEN': {
              target: 'open',
              actions: { type: 'select', params: ({ event }) => ({ image: event.image }) },
            },
          },
        },
        open: {
          on: {
            'IMAGE.CLOSE': { target: 'closed', actions: 'unselect' },
            'IMAGE.OPEN': { actions: { type: 'select', params: ({ event }) => ({ image: event.image }) } },
          },
        },
      },
    },
  },
});

/**
 * SPEC section 8: what the server said (a code, its values, its text), or the dashboard's
 * fallback for a failure that says nothing. src/api/images.ts already turns a server
 * failure without a message into the model's own text ("Ultra generation failed").
 */
export function failureOf(error: unknown): Problem {
  return problemOf(error, {
    code: 'PROVIDER_ERROR',
    message: generationMessages.dashboardFallback,
    details: { rule: 'dashboardFallback' },
  });
}
