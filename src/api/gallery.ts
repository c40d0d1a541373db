import { fromPromise } from 'xstate';
import type { ImagePage } from '../domain/image-record';
import { galleryMachine, type LoadRequest } from '../machines/gallery';
import { deleteMyImage, downloadImage, fetchMyImages } from './images';

/** The gallery machine wired to the real API; the screen adds what needs the page. */
export const liveGalleryMachine = galleryMachine.provide({
  actors: {
    loadPage: fromPromise<ImagePage, LoadRequest>(({ input }) =>
      fetchMyImages({ page: input.page, limit: input.limit, ...(input.search === null ? {} : { q: input.search }) }),
    ),
    deleteImage: fromPromise<void, { id: number }>(({ input }) => deleteMyImage(input.id)),
  },
  actions: {
    downloadImage: (_, params) => {
      // SPEC: a failed download is only logged.
      downloadImage(params.image).catch((error: unknown) => console.warn('[gallery] download failed', error));
    },
    logFailure: (_, params) => {
      console.warn('[gallery] image fetch failed', params.error);
    },
  },
});
