import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { toastsMachine } from '../../src/machines/toasts';
import { describeModel } from './harness';

type ToastsContext = { toasts: Array<{ id: number }>; nextId: number };

describeModel('toasts', {
  machine: toastsMachine,
  events: (snapshot) => {
    const context = snapshot.context as ToastsContext;
    return [
      // Three toasts are enough to see the queue and keep the traversal finite.
      ...(context.nextId <= 3 ? [{ type: 'TOAST.SHOW', kind: 'error', message: 'Failed to send message' }] : []),
      ...context.toasts.map((t) => ({ type: 'TOAST.DISMISS', id: t.id })),
      { type: 'TOAST.DISMISS', id: 99 },
    ];
  },
  sut: () => toastsMachine,
  check: (snapshot) => {
    const { toasts } = snapshot.context as ToastsContext;
    expect(snapshot.matches('empty')).toBe(toasts.length === 0);
  },
});

describe('toasts queue', () => {
  it('keeps at most five, dropping the oldest', () => {
    const actor = createActor(toastsMachine).start();
    for (let i = 1; i <= 7; i += 1) actor.send({ type: 'TOAST.SHOW', kind: 'info', message: `m${i}` });
    expect(actor.getSnapshot().context.toasts.map((t) => t.message)).toEqual(['m3', 'm4', 'm5', 'm6', 'm7']);
  });
});
