import { fromPromise } from 'xstate';
import type { GenerationReply, ImageRecord } from '../domain/image-record';
import { generationMachine, type GenerateRequest } from '../machines/generation';
import { keepDraft, sessionUserId } from './drafts';
import { downloadImage, fetchMyImages, generateImage } from './images';

/** The generation machine wired to the real API; the screen adds what needs the page. */
export const liveGenerationMachine = generationMachine.provide({
  actors: {
    generate: fromPromise<GenerationReply, GenerateRequest>(({ input, signal }) =>
      generateImage(input.endpoint, input.body, signal),
    ),
    loadRecent: fromPromise<ImageRecord[], { limit: number }>(async ({ input }) => {
      const page = await fetchMyImages({ page: 1, limit: input.limit });
      return page.images;
    }),
  },
  actions: {
    keepDraft: ({ context }, params) => keepDraft('generation', sessionUserId(context.session), params.text),
    downloadImage: (_, params) => {
      // SPEC: a failed download is only logged.
      downloadImage(params.image).catch((error: unknown) => console.warn('[generation] download failed', error));
    },
    logFailure: (_, params) => {
      console.warn(`[generation] ${params.what} failed`, params.error);
    },
  },
});
