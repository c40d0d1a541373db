import type { ActorRefFrom } from 'xstate';
import type { generationMachine } from '../../machines/generation';

export type GenerationRef = ActorRefFrom<typeof generationMachine>;
