import type { AnyStateMachine } from 'xstate';
import { chatSendMachine } from './chat-send';
import { chatSettingsMachine } from './chat-settings';
import { conversationRoutingMachine } from './conversation-routing';
import { generationMachine } from './generation';
import { sessionMachine } from './session';
import { toastsMachine } from './toasts';

/**
 * Every statechart of the app, for the generated diagrams, the development visualiser and
 * the staleness test. A new machine is added here.
 */
export const machineCatalogue: Readonly<Record<string, AnyStateMachine>> = {
  session: sessionMachine,
  'chat-send': chatSendMachine,
  'chat-settings': chatSettingsMachine,
  'conversation-routing': conversationRoutingMachine,
  toasts: toastsMachine,
  generation: generationMachine,
};
