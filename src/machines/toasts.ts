import { assign, setup } from 'xstate';
import type { ToastKind } from '../domain/toast';

/** A link a notification offers (a finished job's image, issue #28). */
export interface ToastLink {
  href: string;
  label: string;
}

export interface Toast {
  id: number;
  kind: ToastKind;
  message: string;
  link?: ToastLink;
}

export type ToastsEvent =
  { type: 'TOAST.SHOW'; kind: ToastKind; message: string; link?: ToastLink } | { type: 'TOAST.DISMISS'; id: number };

/** The notification queue. Each toast closes itself after SPEC's duration (the view's timer). */
export const toastsMachine = setup({
  // Stryker disable all: type declarations only, erased when the code runs
  types: {
    context: {} as { toasts: Toast[]; nextId: number },
    events: {} as ToastsEvent,
  },
  // Stryker restore all
  actions: {
    push: assign(({ context }, params: { kind: ToastKind; message: string; link?: ToastLink }) => ({
      // At most 5 on screen: the oldest go first.
      toasts: [
        ...context.toasts,
        {
          id: context.nextId,
          kind: params.kind,
          message: params.message,
          ...(params.link ? { link: params.link } : {}),
        },
      ].slice(-5),
      nextId: context.nextId + 1,
    })),
    remove: assign(({ context }, params: { id: number }) => ({
      toasts: context.toasts.filter((toast) => toast.id !== params.id),
    })),
  },
  guards: {
    isTheLastOne: ({ context }, params: { id: number }) =>
      context.toasts.length === 1 && context.toasts[0]?.id === params.id,
  },
}).createMachine({
  id: 'toasts',
  context: { toasts: [], nextId: 1 },
  initial: 'empty',
  states: {
    empty: {
      on: {
        'TOAST.SHOW': {
          target: 'showing',
          actions: {
            type: 'push',
            params: ({ event }) => ({ kind: event.kind, message: event.message, link: event.link }),
          },
        },
      },
    },
    showing: {
      on: {
        'TOAST.SHOW': {
          actions: {
            type: 'push',
            params: ({ event }) => ({ kind: event.kind, message: event.message, link: event.link }),
          },
        },
        'TOAST.DISMISS': [
          {
            guard: { type: 'isTheLastOne', params: ({ event }) => ({ id: event.id }) },
            target: 'empty',
            actions: { type: 'remove', params: ({ event }) => ({ id: event.id }) },
          },
          { actions: { type: 'remove', params: ({ event }) => ({ id: event.id }) } },
        ],
      },
    },
  },
});
