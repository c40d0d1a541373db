import type { AnyStateMachine } from 'xstate';
import { generationMachine } from './generation';
import { sessionMachine } from './session';
import { toastsMachine } from './toasts';

/**
 * Every statechart of the app, for the generated diagrams, the development visualiser and
 * the staleness test. A new machine is added here.
 */
export const machineCatalogue: Readonly<Record<string, AnyStateMachine>> = {
  session: sessionMachine,
  toasts: toastsMachine,
  generation: generationMachine,
};
