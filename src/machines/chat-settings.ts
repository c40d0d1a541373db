import { assign, setup, type ActorRefFrom } from 'xstate';
import { clampContextLimit, CONTEXT_TOKENS_LIMIT_DEFAULT } from '../domain/chat';

export type ChatSettingsEvent =
  | { type: 'SETTINGS.OPEN' }
  | { type: 'SETTINGS.CLOSE' }
  | { type: 'SETTINGS.MODEL'; model: string }
  /** Raw value of the number input: non-numeric text is ignored, numbers are clamped. */
  | { type: 'SETTINGS.CONTEXT_LIMIT'; value: unknown }
  /** The model list arrived: a remembered model that is gone falls back to the default. */
  | { type: 'MODELS.LOADED'; ids: string[]; defaultId: string; defaultName?: string };

export interface ChatSettingsContext {
  model: string | null;
  contextTokensLimit: number;
}

/**
 * SPEC section 2 "Chat settings modal" and section 5: the chosen model (remembered in
 * browser storage by the injected `persistModel`) and the context token limit.
 */
export const chatSettingsMachine = setup({
  // Stryker disable all: type declarations only, erased when the code runs
  types: {
    context: {} as ChatSettingsContext,
    events: {} as ChatSettingsEvent,
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- xstate takes the input type from it
    input: {} as { storedModel?: string | null },
  },
  // Stryker restore all
  actions: {
    persistModel: (_, _params: { model: string }) => {},
    /**
     * Says that the remembered model is gone and which one is used instead (issue #26): its id,
     * and its name as the server gives it (or the id when it gives none).
     */
    announceFallback: (_, _params: { gone: string; id: string; name: string }) => {},
    setModel: assign((_, params: { model: string }) => ({ model: params.model })),
    setContextLimit: assign(({ context }, params: { value: unknown }) => ({
      contextTokensLimit: clampContextLimit(params.value, context.contextTokensLimit),
    })),
  },
  guards: {
    rememberedGone: ({ context }, params: { ids: string[] }) =>
      context.model !== null && !params.ids.includes(context.model),
    noModel: ({ context }) => context.model === null,
  },
}).createMachine({
  id: 'chatSettings',
  context: ({ input }) => ({
    model: input.storedModel ?? null,
    contextTokensLimit: CONTEXT_TOKENS_LIMIT_DEFAULT,
  }),
  initial: 'closed',
  // The settings change the same way whether the dialog is open or closed.
  on: {
    'SETTINGS.MODEL': {
      actions: [
        { type: 'setModel', params: ({ event }) => ({ model: event.model }) },
        { type: 'persistModel', params: ({ event }) => ({ model: event.model }) },
      ],
    },
    'SETTINGS.CONTEXT_LIMIT': {
      actions: { type: 'setContextLimit', params: ({ event }) => ({ value: event.value }) },
    },
    'MODELS.LOADED': [
      {
        // The server no longer offers the remembered model: the default takes its place, is
        // remembered instead, and the user is told, so a message is never sent to a model
        // they did not choose without them knowing.
        guard: { type: 'rememberedGone', params: ({ event }) => ({ ids: event.ids }) },
        actions: [
          {
            type: 'announceFallback',
            params: ({ context, event }) => ({
              gone: context.model!,
              id: event.defaultId,
              name: event.defaultName ?? event.defaultId,
            }),
          },
          { type: 'setModel', params: ({ event }) => ({ model: event.defaultId }) },
          { type: 'persistModel', params: ({ event }) => ({ model: event.defaultId }) },
        ],
      },
      {
        guard: 'noModel',
        actions: { type: 'setModel', params: ({ event }) => ({ model: event.defaultId }) },
      },
    ],
  },
  states: {
    closed: {
      on: {
        'SETTINGS.OPEN': 'open',
      },
    },
    open: {
      on: {
        'SETTINGS.CLOSE': 'closed',
      },
    },
  },
});

export type ChatSettingsRef = ActorRefFrom<typeof chatSettingsMachine>;
