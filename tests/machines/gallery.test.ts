import { describe, expect, it } from 'vitest';
import { createActor, fromPromise } from 'xstate';
import type { ImagePage, ImageRecord } from '../../src/domain/image-record';
import { galleryMachine, visibleImages, type GalleryInput, type LoadRequest } from '../../src/machines/gallery';

/**
 * The gallery chart through a running actor (SPEC section 2, "Gallery"; section 6's
 * GET /api/images/my-images), for what the screen's paths in tests/ui/gallery.model.test.tsx
 * cannot tell apart: each request the chart makes and what it does with each answer. The
 * requests, the deletes and the screen's side effects (the address, downloads, the
 * clipboard, notices) are recorded; the test answers each request.
 */
function image(id: number, prompt = `picture ${id}`): ImageRecord {
  return {
    id,
    fileName: `${id}.png`,
    originalName: null,
    imageUrl: `/images/${id}.png`,
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
    createdAt: '2026-11-27T10:00:00.000Z',
    updatedAt: '2026-11-27T10:00:00.000Z',
    seed: null,
    model: 'core',
    finish_reason: 'SUCCESS',
    negativePrompt: null,
    aspectRatio: '1:1',
    modelVariant: null,
    thumbnailUrl: `/images/${id}.png`,
  };
}

/** A page as the server answers it: `total` images in all, `limit` a page. */
function page(images: ImageRecord[], currentPage: number, total: number, limit = 12): ImagePage {
  const totalPages = Math.ceil(total / limit);
  return {
    images,
    pagination: { currentPage, totalPages, total, hasNext: currentPage < totalPages, hasPrev: currentPage > 1 },
  };
}

function gallery(input: GalleryInput = {}) {
  const loads: Array<LoadRequest & { resolve: (page: ImagePage) => void; reject: (error: unknown) => void }> = [];
  const deletes: Array<{ id: number; resolve: () => void; reject: (error: unknown) => void }> = [];
  /** The screen's side effects, in order. */
  const effects: string[] = [];
  const machine = galleryMachine.provide({
    actors: {
      loadPage: fromPromise<ImagePage, LoadRequest>(
        ({ input: request }) => new Promise((resolve, reject) => loads.push({ ...request, resolve, reject })),
      ),
      deleteImage: fromPromise<void, { id: number }>(
        ({ input: { id } }) => new Promise((resolve, reject) => deletes.push({ id, resolve, reject })),
      ),
    },
    actions: {
      syncLocation: (_, params: { page: number; limit: number }) => {
        effects.push(`address page=${params.page} limit=${params.limit}`);
      },
      downloadImage: (_, params: { image: ImageRecord }) => {
        effects.push(`download ${params.image.id}`);
      },
      copyPrompt: (_, params: { prompt: string }) => {
        effects.push(`copy ${params.prompt}`);
      },
      notifyDeleted: () => {
        effects.push('deleted');
      },
      notifyDeleteFailed: (_, params: { error: unknown }) => {
        effects.push(`delete failed: ${(params.error as Error).message}`);
      },
      logFailure: () => {
        effects.push('logged');
      },
    },
  });
  const actor = createActor(machine, { input }).start();
  const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
  /** Answers the last request with `answer` and lets the chart take it. */
  const answer = async (answerPage: ImagePage) => {
    loads.at(-1)!.resolve(answerPage);
    await settle();
  };
  const request = () => {
    const { page: p, limit, search } = loads.at(-1)!;
    return { page: p, limit, search };
  };
  const state = () => actor.getSnapshot().value;
  return { actor, loads, deletes, effects, answer, request, state, settle };
}

const twelve = Array.from({ length: 12 }, (_, i) => image(i + 1));

describe('loading a page', () => {
  it('asks for the page and size of the address, 1 and 12 (SPEC) when it has none, with no search', () => {
    expect(gallery().request()).toEqual({ page: 1, limit: 12, search: null });
    expect(gallery({ page: 3, limit: 24 }).request()).toEqual({ page: 3, limit: 24, search: null });
  });

  it('shows the page the server sent', async () => {
    const g = gallery();
    await g.answer(page(twelve, 1, 30));
    expect(g.state()).toEqual({ ready: 'browsing' });
    expect(g.actor.getSnapshot().context.images).toEqual(twelve);
    expect(g.actor.getSnapshot().context.pagination).toMatchObject({ total: 30, totalPages: 3 });
  });

  it('tells "nothing yet" from "nothing found": an empty answer is empty, or an empty search when a search was sent', async () => {
    const g = gallery();
    await g.answer(page([image(1)], 1, 1));
    // The last image went elsewhere: the page read again is empty, and so is its count.
    g.actor.send({ type: 'REFRESH' });
    await g.answer(page([], 1, 0));
    expect(g.state()).toBe('empty');
    expect(g.actor.getSnapshot().context).toMatchObject({ images: [], pagination: { total: 0 } });

    const s = gallery();
    await s.answer(page(twelve, 1, 12));
    s.actor.send({ type: 'FILTER.CHANGE', text: 'unicorn' });
    s.actor.send({ type: 'SEARCH.ALL' });
    await s.answer(page([], 1, 0));
    expect(s.state()).toBe('emptySearch');
    expect(s.actor.getSnapshot().context).toMatchObject({ images: [], pagination: { total: 0 } });
  });

  it('goes to the last page when the page asked for is past the end of a list that has images, and fixes the address', async () => {
    const g = gallery({ page: 9 });
    await g.answer(page([], 9, 30));
    expect(g.request()).toEqual({ page: 3, limit: 12, search: null });
    expect(g.effects).toEqual(['address page=3 limit=12']);
    expect(g.state()).toBe('loading');
    await g.answer(page(twelve.slice(0, 6), 3, 30));
    expect(g.state()).toEqual({ ready: 'browsing' });
  });

  it('logs a failed read (SPEC) and reads the same page again on Retry', async () => {
    const g = gallery({ page: 2 });
    g.loads.at(-1)!.reject(new Error('502'));
    await g.settle();
    expect(g.state()).toBe('error');
    expect(g.effects).toEqual(['logged']);
    g.actor.send({ type: 'RETRY' });
    expect(g.loads).toHaveLength(2);
    expect(g.request()).toEqual({ page: 2, limit: 12, search: null });
  });

  it('reads the same page again on refresh, from any state', async () => {
    const g = gallery({ page: 2, limit: 6 });
    await g.answer(page(twelve.slice(0, 6), 2, 20, 6));
    g.actor.send({ type: 'REFRESH' });
    expect(g.loads).toHaveLength(2);
    expect(g.request()).toEqual({ page: 2, limit: 6, search: null });
    expect(g.effects).toEqual([]);
  });
});

describe('paging and the page size (SPEC: 6, 12, 24, 48), written into the address', () => {
  it('goes to a page with the same size, and puts it in the address', async () => {
    const g = gallery({ limit: 24 });
    await g.answer(page(twelve, 1, 100, 24));
    g.actor.send({ type: 'PAGE.GO', page: 4 });
    expect(g.request()).toEqual({ page: 4, limit: 24, search: null });
    expect(g.effects).toEqual(['address page=4 limit=24']);
  });

  it('never asks for a page before the first or between pages', async () => {
    const g = gallery();
    await g.answer(page(twelve, 1, 100));
    g.actor.send({ type: 'PAGE.GO', page: 0 });
    expect(g.request().page).toBe(1);
    g.actor.send({ type: 'PAGE.GO', page: 2.7 });
    expect(g.request().page).toBe(2);
  });

  it('starts again from page 1 when the size changes', async () => {
    const g = gallery({ page: 3 });
    await g.answer(page(twelve, 3, 100));
    g.actor.send({ type: 'LIMIT.SET', limit: 48 });
    expect(g.request()).toEqual({ page: 1, limit: 48, search: null });
    expect(g.effects).toEqual(['address page=1 limit=48']);
  });

  it('follows the address when it changes (Back, a link), and does not read again when it says what is shown', async () => {
    const g = gallery({ page: 2, limit: 12 });
    await g.answer(page(twelve, 2, 100));
    g.actor.send({ type: 'LOCATION.SYNC', page: 2, limit: 12 });
    expect(g.loads).toHaveLength(1);
    g.actor.send({ type: 'LOCATION.SYNC', page: 5, limit: 12 });
    expect(g.request()).toEqual({ page: 5, limit: 12, search: null });
    await g.answer(page(twelve, 5, 100));
    g.actor.send({ type: 'LOCATION.SYNC', page: 5, limit: 6 });
    expect(g.request()).toEqual({ page: 5, limit: 6, search: null });
    // The address already says so: nothing is written back.
    expect(g.effects).toEqual([]);
  });
});

describe('the search box (SPEC: filters the loaded page by prompt, case-insensitive)', () => {
  it('filters what is loaded as the user types, without asking the server', async () => {
    const g = gallery();
    await g.answer(page([image(1, 'A red Fox'), image(2, 'blue whale'), image(3, 'fox den')], 1, 3));
    g.actor.send({ type: 'FILTER.CHANGE', text: 'FOX' });
    expect(g.loads).toHaveLength(1);
    expect(visibleImages(g.actor.getSnapshot().context).map((i) => i.id)).toEqual([1, 3]);
  });

  it('searches every image for the typed text from page 1, and clears the box', async () => {
    const g = gallery({ page: 3 });
    await g.answer(page(twelve, 3, 100));
    g.actor.send({ type: 'FILTER.CHANGE', text: '  fox  ' });
    g.actor.send({ type: 'SEARCH.ALL' });
    expect(g.request()).toEqual({ page: 1, limit: 12, search: 'fox' });
    expect(g.actor.getSnapshot().context.filter).toBe('');
    expect(g.effects).toEqual(['address page=1 limit=12']);
  });

  it('does not search for nothing', async () => {
    const g = gallery();
    await g.answer(page(twelve, 1, 12));
    g.actor.send({ type: 'FILTER.CHANGE', text: '   ' });
    g.actor.send({ type: 'SEARCH.ALL' });
    expect(g.loads).toHaveLength(1);
  });

  it('clearing the search reads page 1 of every image', async () => {
    const g = gallery();
    await g.answer(page(twelve, 1, 12));
    g.actor.send({ type: 'FILTER.CHANGE', text: 'fox' });
    g.actor.send({ type: 'SEARCH.ALL' });
    await g.answer(page([image(5, 'fox')], 1, 1));
    // What the search found is shown.
    expect(g.state()).toEqual({ ready: 'browsing' });
    g.actor.send({ type: 'PAGE.GO', page: 1 });
    expect(g.request().search).toBe('fox');
    await g.answer(page([image(5, 'fox')], 1, 1));
    g.actor.send({ type: 'FILTER.CHANGE', text: 'fo' });
    g.effects.length = 0;
    g.actor.send({ type: 'SEARCH.CLEAR' });
    expect(g.request()).toEqual({ page: 1, limit: 12, search: null });
    expect(g.effects).toEqual(['address page=1 limit=12']);
    await g.answer(page(twelve, 1, 12));
    expect(visibleImages(g.actor.getSnapshot().context)).toHaveLength(12);
  });
});

describe('the image modal', () => {
  async function viewing() {
    const g = gallery();
    await g.answer(page([image(1, 'cat'), image(2, 'dog'), image(3, 'cat again')], 1, 3));
    return g;
  }
  const selected = (g: Awaited<ReturnType<typeof viewing>>) => g.actor.getSnapshot().context.selectedId;

  it('opens an image that is shown, and not one the search box hides', async () => {
    const g = await viewing();
    g.actor.send({ type: 'FILTER.CHANGE', text: 'cat' });
    g.actor.send({ type: 'IMAGE.OPEN', id: 2 });
    expect(g.state()).toEqual({ ready: 'browsing' });
    g.actor.send({ type: 'IMAGE.OPEN', id: 3 });
    expect(g.state()).toEqual({ ready: 'viewing' });
    expect(selected(g)).toBe(3);
  });

  it('steps to the next and previous shown image, and stays at either end', async () => {
    const g = await viewing();
    g.actor.send({ type: 'IMAGE.OPEN', id: 1 });
    g.actor.send({ type: 'IMAGE.PREV' });
    expect(selected(g)).toBe(1);
    g.actor.send({ type: 'IMAGE.NEXT' });
    expect(selected(g)).toBe(2);
    g.actor.send({ type: 'IMAGE.NEXT' });
    g.actor.send({ type: 'IMAGE.NEXT' });
    expect(selected(g)).toBe(3);
    g.actor.send({ type: 'IMAGE.PREV' });
    expect(selected(g)).toBe(2);
  });

  it('skips the images the search box hides', async () => {
    const g = await viewing();
    g.actor.send({ type: 'FILTER.CHANGE', text: 'CAT' });
    g.actor.send({ type: 'IMAGE.OPEN', id: 1 });
    g.actor.send({ type: 'IMAGE.NEXT' });
    expect(selected(g)).toBe(3);
    g.actor.send({ type: 'IMAGE.PREV' });
    expect(selected(g)).toBe(1);
  });

  it('closes on Close, and when the user types in the search box', async () => {
    const g = await viewing();
    g.actor.send({ type: 'IMAGE.OPEN', id: 2 });
    g.actor.send({ type: 'IMAGE.CLOSE' });
    expect(g.state()).toEqual({ ready: 'browsing' });
    expect(selected(g)).toBeNull();
    g.actor.send({ type: 'IMAGE.OPEN', id: 2 });
    g.actor.send({ type: 'FILTER.CHANGE', text: 'd' });
    expect(g.state()).toEqual({ ready: 'browsing' });
    expect(selected(g)).toBeNull();
    expect(g.actor.getSnapshot().context.filter).toBe('d');
  });

  it('closes when the page is read again', async () => {
    const g = await viewing();
    g.actor.send({ type: 'IMAGE.OPEN', id: 2 });
    g.actor.send({ type: 'REFRESH' });
    expect(selected(g)).toBeNull();
  });

  it('downloads and copies the prompt of the image asked for (SPEC: view and download actions; Copy Prompt)', async () => {
    const g = await viewing();
    g.actor.send({ type: 'DOWNLOAD', image: image(2, 'dog') });
    g.actor.send({ type: 'IMAGE.OPEN', id: 1 });
    g.actor.send({ type: 'COPY_PROMPT', prompt: 'cat' });
    g.actor.send({ type: 'DOWNLOAD', image: image(1, 'cat') });
    expect(g.effects).toEqual(['download 2', 'copy cat', 'download 1']);
  });
});

describe('deleting an image, after a confirmation', () => {
  async function ready() {
    const g = gallery({ page: 2 });
    await g.answer(page([image(1), image(2)], 2, 14));
    return g;
  }

  it('deletes nothing until confirmed, and nothing when cancelled', async () => {
    const g = await ready();
    g.actor.send({ type: 'DELETE.ASK', image: image(2) });
    expect(g.state()).toEqual({ ready: 'confirming' });
    expect(g.actor.getSnapshot().context.doomed?.id).toBe(2);
    g.actor.send({ type: 'DELETE.CANCEL' });
    expect(g.state()).toEqual({ ready: 'browsing' });
    expect(g.actor.getSnapshot().context.doomed).toBeNull();
    expect(g.deletes).toEqual([]);
  });

  it('deletes the image asked for from the modal, says so, and reads the same page again', async () => {
    const g = await ready();
    g.actor.send({ type: 'IMAGE.OPEN', id: 1 });
    g.actor.send({ type: 'DELETE.ASK', image: image(1) });
    g.actor.send({ type: 'DELETE.CONFIRM' });
    expect(g.deletes.map((d) => d.id)).toEqual([1]);
    g.deletes[0]!.resolve();
    await g.settle();
    expect(g.effects).toEqual(['deleted']);
    expect(g.loads).toHaveLength(2);
    expect(g.request()).toEqual({ page: 2, limit: 12, search: null });
    expect(g.actor.getSnapshot().context).toMatchObject({ selectedId: null, doomed: null });
  });

  it('says when a delete failed and goes back to the page, with nothing selected', async () => {
    const g = await ready();
    g.actor.send({ type: 'IMAGE.OPEN', id: 2 });
    g.actor.send({ type: 'DELETE.ASK', image: image(2) });
    g.actor.send({ type: 'DELETE.CONFIRM' });
    g.deletes[0]!.reject(new Error('500'));
    await g.settle();
    expect(g.effects).toEqual(['delete failed: 500']);
    expect(g.state()).toEqual({ ready: 'browsing' });
    expect(g.actor.getSnapshot().context).toMatchObject({ selectedId: null, doomed: null });
    expect(g.loads).toHaveLength(1);
  });
});
