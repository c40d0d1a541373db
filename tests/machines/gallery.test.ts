import { describe, expect, it } from 'vitest';
import { createActor, fromPromise } from 'xstate';
import type { ImagePage, ImageRecord } from '../../src/domain/image-record';
import { paginationOf } from '../../src/domain/image-record';
import {
  galleryMachine,
  neighbourId,
  visibleImages,
  type GalleryContext,
  type LoadRequest,
} from '../../src/machines/gallery';
import { describeModel, doneOf, errorOf, type Controls } from './harness';

const image = (id: number, prompt: string): ImageRecord => ({
  id,
  fileName: `${'a'.repeat(31)}${id}.png`,
  originalName: null,
  imageUrl: `http://localhost/images/${'a'.repeat(31)}${id}.png`,
  thumbnailUrl: `http://localhost/images/${'b'.repeat(31)}${id}.webp`,
  prompt,
  width: 1024,
  height: 1024,
  steps: null,
  cfgScale: null,
  stylePreset: null,
  size: '1024x1024',
  fileSize: 1000,
  mimeType: 'image/png',
  userId: 1,
  createdAt: '2026-11-01T10:00:00.000Z',
  updatedAt: '2026-11-01T10:00:00.000Z',
  seed: 1,
  model: 'core',
  finish_reason: 'SUCCESS',
  negativePrompt: null,
  aspectRatio: '1:1',
  modelVariant: null,
});

const fox = image(1, 'Red fox');
const owl = image(2, 'Snowy owl');
const foxTwo = image(3, 'Fox cub');

const pageOf = (images: ImageRecord[], page: number, total: number, limit = 12): ImagePage => ({
  images,
  pagination: paginationOf(page, limit, total),
});

/** The replies the fake server gives: a full list, nothing at all, and a page past the end. */
const replies = (request: { page: number; limit: number }): ImagePage[] => [
  pageOf([fox, owl, foxTwo], request.page, 30, request.limit),
  pageOf([], request.page, 0, request.limit),
  pageOf([], request.page, 5, request.limit),
];

const actors = (controls: Controls) => ({
  loadPage: controls.promise('loadPage'),
  deleteImage: controls.promise('deleteImage'),
});

const pageEvents = (context: GalleryContext) => [
  { type: 'IMAGE.OPEN', id: fox.id },
  ...(context.filter === '' ? [{ type: 'IMAGE.OPEN', id: owl.id }] : []),
  { type: 'IMAGE.NEXT' },
  { type: 'IMAGE.PREV' },
  { type: 'IMAGE.CLOSE' },
  { type: 'DOWNLOAD', image: fox },
  { type: 'COPY_PROMPT', prompt: fox.prompt },
  { type: 'DELETE.ASK', image: owl },
  { type: 'DELETE.CONFIRM' },
  { type: 'DELETE.CANCEL' },
];

/** What tells two gallery states apart (the images themselves come from three fixed replies). */
const project = (c: GalleryContext) => ({
  p: c.page,
  l: c.limit,
  f: c.filter,
  s: c.search,
  n: c.images.length,
  pg: c.pagination,
  sel: c.selectedId,
  d: c.doomed?.id,
});

describeModel('gallery', {
  machine: galleryMachine,
  input: {},
  events: (snapshot) => {
    const context = snapshot.context as GalleryContext;
    const request = { page: context.page, limit: context.limit };
    // Paging, sizing and searching only from the plain first page, to keep the traversal small.
    const plain = context.filter === '' && context.search === null;
    const home = plain && context.page === 1 && context.limit === 12;
    return [
      ...doneOf(snapshot, 'loadPage', replies(request)[0]),
      // Empty and past-the-end replies only on the first page.
      ...(context.page === 1
        ? replies(request)
            .slice(1)
            .flatMap((r) => doneOf(snapshot, 'loadPage', r))
        : []),
      ...errorOf(snapshot, 'loadPage', new Error('Network error occurred')),
      ...doneOf(snapshot, 'deleteImage', undefined),
      ...errorOf(snapshot, 'deleteImage', new Error('Resource not found')),
      ...(home
        ? [
            { type: 'PAGE.GO', page: 2 },
            { type: 'LIMIT.SET', limit: 24 },
          ]
        : []),
      ...(context.page === 2 ? [{ type: 'LOCATION.SYNC', page: 1, limit: 12 }] : []),
      ...(context.page === 1 ? [{ type: 'LOCATION.SYNC', page: 1, limit: context.limit }] : []),
      { type: 'REFRESH' },
      ...(snapshot.matches('error') || snapshot.matches('empty') ? [{ type: 'RETRY' }] : []),
      ...(context.search === null && context.page === 1
        ? [context.filter === '' ? { type: 'FILTER.CHANGE', text: 'FOX' } : { type: 'FILTER.CHANGE', text: '' }]
        : []),
      { type: 'SEARCH.ALL' },
      ...(context.search !== null ? [{ type: 'SEARCH.CLEAR' }] : []),
      // What the cards and the modal offer, tried wherever the page is shown and in empty.
      ...(snapshot.matches('ready') || snapshot.matches('empty') ? pageEvents(context) : []),
    ];
  },
  serializeState: (snapshot) =>
    JSON.stringify({ v: snapshot.value as unknown, c: project(snapshot.context as GalleryContext) }),
  projectContext: (context) => project(context as GalleryContext),
  sut: (controls) =>
    galleryMachine.provide({
      actors: actors(controls) as never,
    }),
  check: (snapshot, controls, event) => {
    const context = snapshot.context as GalleryContext;
    // The modal's image is always one the screen shows.
    if (snapshot.matches({ ready: 'viewing' })) {
      expect(visibleImages(context).map((i) => i.id)).toContain(context.selectedId);
    } else if (!snapshot.matches({ ready: 'confirming' }) && !snapshot.matches({ ready: 'deleting' })) {
      expect(context.selectedId).toBeNull();
    }
    expect(context.doomed !== null).toBe(
      snapshot.matches({ ready: 'confirming' }) || snapshot.matches({ ready: 'deleting' }),
    );
    // Every load asks for what the context says.
    if (snapshot.matches('loading')) {
      const last = [...controls.inputs].reverse().find((i) => i.src === 'loadPage');
      expect(last?.input).toEqual({
        page: context.page,
        limit: context.limit,
        search: context.search,
      } satisfies LoadRequest);
    }
    if (event.type === 'DELETE.CONFIRM' && snapshot.matches({ ready: 'deleting' })) {
      const last = [...controls.inputs].reverse().find((i) => i.src === 'deleteImage');
      expect(last?.input).toEqual({ id: owl.id });
    }
  },
});

describe('gallery machine', () => {
  const live = (loads: ImagePage[], deleted: number[] = []) => {
    const requests: LoadRequest[] = [];
    const locations: Array<{ page: number; limit: number }> = [];
    const machine = galleryMachine.provide({
      actors: {
        loadPage: fromPromise<ImagePage, LoadRequest>(async ({ input }) => {
          requests.push(input);
          const next = loads.shift();
          if (!next) throw new Error('no more pages');
          return next;
        }),
        deleteImage: fromPromise<void, { id: number }>(async ({ input }) => {
          deleted.push(input.id);
        }),
      },
      actions: { syncLocation: (_, params) => locations.push(params) },
    });
    return { machine, requests, locations };
  };
  const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

  it('starts from the URL, writes page changes back to it and searches all pages from page 1', async () => {
    const { machine, requests, locations } = live([
      pageOf([fox, owl], 3, 40, 6),
      pageOf([owl], 4, 40, 6),
      pageOf([fox, foxTwo], 1, 2, 6),
    ]);
    const actor = createActor(machine, { input: { page: 3, limit: 6 } }).start();
    await settle();
    actor.send({ type: 'PAGE.GO', page: 4 });
    await settle();
    actor.send({ type: 'FILTER.CHANGE', text: ' fox ' });
    expect(visibleImages(actor.getSnapshot().context).map((i) => i.id)).toEqual([]);
    actor.send({ type: 'SEARCH.ALL' });
    await settle();
    expect(requests).toEqual([
      { page: 3, limit: 6, search: null },
      { page: 4, limit: 6, search: null },
      { page: 1, limit: 6, search: 'fox' },
    ]);
    expect(locations).toEqual([
      { page: 4, limit: 6 },
      { page: 1, limit: 6 },
    ]);
    expect(actor.getSnapshot().matches('ready')).toBe(true);
  });

  it('moves the modal with previous and next within the filtered page, stopping at the ends', async () => {
    const { machine } = live([pageOf([fox, owl, foxTwo], 1, 3)]);
    const actor = createActor(machine, { input: {} }).start();
    await settle();
    actor.send({ type: 'FILTER.CHANGE', text: 'fox' });
    actor.send({ type: 'IMAGE.OPEN', id: fox.id });
    actor.send({ type: 'IMAGE.NEXT' });
    expect(actor.getSnapshot().context.selectedId).toBe(foxTwo.id);
    actor.send({ type: 'IMAGE.NEXT' });
    expect(actor.getSnapshot().context.selectedId).toBe(foxTwo.id);
    expect(neighbourId(actor.getSnapshot().context, -1)).toBe(fox.id);
  });

  it('after deleting the only image of the last page, shows the new last page', async () => {
    const deleted: number[] = [];
    const { machine, requests } = live([pageOf([owl], 2, 13), pageOf([], 2, 12), pageOf([fox], 1, 12)], deleted);
    const actor = createActor(machine, { input: { page: 2 } }).start();
    await settle();
    actor.send({ type: 'DELETE.ASK', image: owl });
    actor.send({ type: 'DELETE.CONFIRM' });
    for (let i = 0; i < 4; i += 1) await settle();
    expect(deleted).toEqual([owl.id]);
    expect(requests.map((r) => r.page)).toEqual([2, 2, 1]);
    expect(actor.getSnapshot().matches('ready')).toBe(true);
  });
});
