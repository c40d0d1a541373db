import type { AnyStateMachine } from 'xstate';
import { billingMachine } from './billing';
import { chatMachine } from './chat';
import { chatReplyMachine } from './chat-reply';
import { chatSendMachine } from './chat-send';
import { chatSettingsMachine } from './chat-settings';
import { conversationRoutingMachine } from './conversation-routing';
import { galleryMachine } from './gallery';
import { generationMachine } from './generation';
import { jobStreamMachine } from './job-stream';
import { paymentStatusMachine } from './payment-status';
import { portraitMachine } from './portrait';
import { purchaseMachine } from './purchase';
import { queueMachine } from './queue';
import { sessionMachine } from './session';
import { toastsMachine } from './toasts';

/**
 * Every statechart of the app, for the generated diagrams, the development visualiser and
 * the staleness test. A new machine is added here.
 */
export const machineCatalogue: Readonly<Record<string, AnyStateMachine>> = {
  session: sessionMachine,
  chat: chatMachine,
  'chat-send': chatSendMachine,
  'chat-reply': chatReplyMachine,
  'chat-settings': chatSettingsMachine,
  'conversation-routing': conversationRoutingMachine,
  toasts: toastsMachine,
  generation: generationMachine,
  billing: billingMachine,
  purchase: purchaseMachine,
  'payment-status': paymentStatusMachine,
  gallery: galleryMachine,
  portrait: portraitMachine,
  queue: queueMachine,
  'job-stream': jobStreamMachine,
};
