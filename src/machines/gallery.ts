import { assign, fromPromise, setup } from 'xstate';
import { filterByPrompt } from '../domain/gallery';
import { IMAGE_PAGE_DEFAULT_LIMIT, type ImagePage, type ImageRecord, type Pagination } from '../domain/image-record';

export interface GalleryContext {
  page: number;
  limit: number;
  /** The search box: filters the loaded page as the user types (SPEC). */
  filter: string;
  /** The search sent to the server ("search all images"), or null. */
  search: string | null;
  images: ImageRecord[];
  pagination: Pagination | null;
  /** The image open in the modal. */
  selectedId: number | null;
  /** The image the user asked to delete, waiting for confirmation. */
  doomed: ImageRecord | null;
}

export interface GalleryInput {
  page?: number;
  limit?: number;
}

export interface LoadRequest {
  page: number;
  limit: number;
  search: string | null;
}

export type GalleryEvent =
  | { type: 'PAGE.GO'; page: number }
  | { type: 'LIMIT.SET'; limit: number }
  /** The URL's page and size changed (reload, Back, a link): the URL wins. */
  | { type: 'LOCATION.SYNC'; page: number; limit: number }
  | { type: 'REFRESH' }
  | { type: 'RETRY' }
  | { type: 'FILTER.CHANGE'; text: string }
  | { type: 'SEARCH.ALL' }
  | { type: 'SEARCH.CLEAR' }
  | { type: 'IMAGE.OPEN'; id: number }
  | { type: 'IMAGE.NEXT' }
  | { type: 'IMAGE.PREV' }
  | { type: 'IMAGE.CLOSE' }
  | { type: 'DOWNLOAD'; image: ImageRecord }
  | { type: 'COPY_PROMPT'; prompt: string }
  | { type: 'DELETE.ASK'; image: ImageRecord }
  | { type: 'DELETE.CONFIRM' }
  | { type: 'DELETE.CANCEL' };

/** The images the screen shows: the loaded page, filtered by the search box. */
export function visibleImages(context: Pick<GalleryContext, 'images' | 'filter'>): ImageRecord[] {
  return filterByPrompt(context.images, context.filter);
}

export function selectedImage(context: GalleryContext): ImageRecord | null {
  return context.images.find((image) => image.id === context.selectedId) ?? null;
}

/** The id of the visible image `step` places from the open one, or null at either end. */
export function neighbourId(context: GalleryContext, step: 1 | -1): number | null {
  const visible = visibleImages(context);
  const at = visible.findIndex((image) => image.id === context.selectedId);
  if (at < 0) return null;
  return visible[at + step]?.id ?? null;
}

/**
 * The gallery screen (SPEC section 2 "Gallery"): one page of the user's images, loaded
 * for the page and page size in the URL, optionally narrowed by a server-side search;
 * the image modal with previous/next; and deletion after a confirmation.
 */
export const galleryMachine = setup({
  // Stryker disable all: type declarations only, erased when the code runs
  types: {
    context: {} as GalleryContext,
    events: {} as GalleryEvent,
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- names the input type for setup
    input: {} as GalleryInput,
  },
  // Stryker restore all
  // Stryker disable all: placeholders; the app and every test provide these actors
  actors: {
    loadPage: fromPromise<ImagePage, LoadRequest>(() => Promise.reject(new Error('loadPage not provided'))),
    deleteImage: fromPromise<void, { id: number }>(() => Promise.reject(new Error('deleteImage not provided'))),
  },
  // Stryker restore all
  actions: {
    /** Writes page and size into the URL (replace: false), so Back returns; provided by the screen. */
    syncLocation: (_, _params: { page: number; limit: number }) => {},
    downloadImage: (_, _params: { image: ImageRecord }) => {},
    copyPrompt: (_, _params: { prompt: string }) => {},
    notifyDeleted: () => {},
    notifyDeleteFailed: (_, _params: { error: unknown }) => {},
    /** SPEC: a failed image fetch is logged. */
    logFailure: (_, _params: { error: unknown }) => {},
    setPage: assign((_, params: { page: number }) => ({ page: Math.max(1, Math.floor(params.page)) })),
    setLimit: assign((_, params: { limit: number }) => ({ limit: params.limit, page: 1 })),
    setLocation: assign((_, params: { page: number; limit: number }) => ({ page: params.page, limit: params.limit })),
    setFilter: assign((_, params: { text: string }) => ({ filter: params.text })),
    searchAll: assign(({ context }) => ({ search: context.filter.trim(), page: 1, filter: '' })),
    clearSearch: assign({ search: null, page: 1, filter: '' }),
    setPageData: assign((_, params: { page: ImagePage }) => ({
      images: params.page.images,
      pagination: params.page.pagination,
    })),
    toLastPage: assign(({ context }) => ({ page: Math.max(1, context.pagination?.totalPages ?? 1) })),
    select: assign((_, params: { id: number }) => ({ selectedId: params.id })),
    step: assign(({ context }, params: { step: 1 | -1 }) => ({
      selectedId: neighbourId(context, params.step) ?? context.selectedId,
    })),
    unselect: assign({ selectedId: null }),
    doom: assign((_, params: { image: ImageRecord }) => ({ doomed: params.image })),
    spare: assign({ doomed: null }),
  },
  guards: {
    locationDiffers: ({ context }, params: { page: number; limit: number }) =>
      params.page !== context.page || params.limit !== context.limit,
    /** A page past the end of a list that has images (after a delete or a stale URL). */
    pastEnd: (_, params: { page: ImagePage }) => params.page.images.length === 0 && params.page.pagination.total > 0,
    nothingFound: ({ context }, params: { page: ImagePage }) =>
      params.page.images.length === 0 && context.search !== null,
    nothingYet: (_, params: { page: ImagePage }) => params.page.images.length === 0,
    hasFilter: ({ context }) => context.filter.trim() !== '',
    isVisible: ({ context }, params: { id: number }) => visibleImages(context).some((i) => i.id === params.id),
    hasNext: ({ context }) => neighbourId(context, 1) !== null,
    hasPrev: ({ context }) => neighbourId(context, -1) !== null,
  },
}).createMachine({
  id: 'gallery',
  context: ({ input }) => ({
    page: input?.page ?? 1,
    limit: input?.limit ?? IMAGE_PAGE_DEFAULT_LIMIT,
    filter: '',
    search: null,
    images: [],
    pagination: null,
    selectedId: null,
    doomed: null,
  }),
  initial: 'loading',
  // Paging, page size, refresh and search answer everywhere: each loads afresh.
  on: {
    'PAGE.GO': {
      target: '.loading',
      actions: [
        { type: 'setPage', params: ({ event }) => ({ page: event.page }) },
        { type: 'syncLocation', params: ({ context }) => ({ page: context.page, limit: context.limit }) },
      ],
    },
    'LIMIT.SET': {
      target: '.loading',
      actions: [
        { type: 'setLimit', params: ({ event }) => ({ limit: event.limit }) },
        { type: 'syncLocation', params: ({ context }) => ({ page: context.page, limit: context.limit }) },
      ],
    },
    'LOCATION.SYNC': {
      guard: { type: 'locationDiffers', params: ({ event }) => ({ page: event.page, limit: event.limit }) },
      target: '.loading',
      actions: { type: 'setLocation', params: ({ event }) => ({ page: event.page, limit: event.limit }) },
    },
    REFRESH: '.loading',
    'FILTER.CHANGE': { actions: { type: 'setFilter', params: ({ event }) => ({ text: event.text }) } },
    'SEARCH.ALL': {
      guard: 'hasFilter',
      target: '.loading',
      actions: [
        'searchAll',
        { type: 'syncLocation', params: ({ context }) => ({ page: context.page, limit: context.limit }) },
      ],
    },
    'SEARCH.CLEAR': {
      target: '.loading',
      actions: [
        'clearSearch',
        { type: 'syncLocation', params: ({ context }) => ({ page: context.page, limit: context.limit }) },
      ],
    },
  },
  states: {
    loading: {
      entry: ['unselect', 'spare'],
      invoke: {
        src: 'loadPage',
        input: ({ context }) => ({ page: context.page, limit: context.limit, search: context.search }),
        onDone: [
          {
            guard: { type: 'pastEnd', params: ({ event }) => ({ page: event.output }) },
            target: 'loading',
            reenter: true,
            actions: [
              { type: 'setPageData', params: ({ event }) => ({ page: event.output }) },
              'toLastPage',
              { type: 'syncLocation', params: ({ context }) => ({ page: context.page, limit: context.limit }) },
            ],
          },
          {
            guard: { type: 'nothingFound', params: ({ event }) => ({ page: event.output }) },
            target: 'emptySearch',
            actions: { type: 'setPageData', params: ({ event }) => ({ page: event.output }) },
          },
          {
            guard: { type: 'nothingYet', params: ({ event }) => ({ page: event.output }) },
            target: 'empty',
            actions: { type: 'setPageData', params: ({ event }) => ({ page: event.output }) },
          },
          { target: 'ready', actions: { type: 'setPageData', params: ({ event }) => ({ page: event.output }) } },
        ],
        onError: { target: 'error', actions: { type: 'logFailure', params: ({ event }) => ({ error: event.error }) } },
      },
    },
    ready: {
      initial: 'browsing',
      on: {
        DOWNLOAD: { actions: { type: 'downloadImage', params: ({ event }) => ({ image: event.image }) } },
        COPY_PROMPT: { actions: { type: 'copyPrompt', params: ({ event }) => ({ prompt: event.prompt }) } },
      },
      states: {
        browsing: {
          on: {
            'IMAGE.OPEN': {
              guard: { type: 'isVisible', params: ({ event }) => ({ id: event.id }) },
              target: 'viewing',
              actions: { type: 'select', params: ({ event }) => ({ id: event.id }) },
            },
            'DELETE.ASK': {
              target: 'confirming',
              actions: { type: 'doom', params: ({ event }) => ({ image: event.image }) },
            },
          },
        },
        viewing: {
          on: {
            'IMAGE.NEXT': { guard: 'hasNext', actions: { type: 'step', params: { step: 1 } } },
            'IMAGE.PREV': { guard: 'hasPrev', actions: { type: 'step', params: { step: -1 } } },
            'IMAGE.CLOSE': { target: 'browsing', actions: 'unselect' },
            // Typing in the search box closes the modal, whose image may no longer show.
            'FILTER.CHANGE': {
              target: 'browsing',
              actions: ['unselect', { type: 'setFilter', params: ({ event }) => ({ text: event.text }) }],
            },
            'DELETE.ASK': {
              target: 'confirming',
              actions: { type: 'doom', params: ({ event }) => ({ image: event.image }) },
            },
          },
        },
        confirming: {
          on: {
            'DELETE.CONFIRM': 'deleting',
            'DELETE.CANCEL': { target: 'browsing', actions: ['spare', 'unselect'] },
          },
        },
        deleting: {
          invoke: {
            src: 'deleteImage',
            input: ({ context }) => ({ id: context.doomed?.id ?? 0 }),
            onDone: { target: '#gallery.loading', actions: 'notifyDeleted' },
            onError: {
              target: 'browsing',
              actions: [
                { type: 'notifyDeleteFailed', params: ({ event }) => ({ error: event.error }) },
                'spare',
                'unselect',
              ],
            },
          },
        },
      },
    },
    empty: {},
    emptySearch: {},
    error: { on: { RETRY: 'loading' } },
  },
});
