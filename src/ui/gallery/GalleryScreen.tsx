import { getRouteApi, useNavigate } from '@tanstack/react-router';
import { useActorRef, useSelector } from '@xstate/react';
import { useEffect, useMemo } from 'react';
import { liveGalleryMachine } from '../../api/gallery';
import { gallerySearchOf } from '../../domain/gallery';
import { IMAGE_PAGE_DEFAULT_LIMIT } from '../../domain/image-record';
import { i18next } from '../../i18n';
import { neighbourId, selectedImage } from '../../machines/gallery';
import { useAppActors, useLiveActor } from '../app-context';
import { ImageModal } from '../images/ImageModal';
import { ConfirmDelete } from './ConfirmDelete';
import { GalleryGrid } from './GalleryGrid';
import { GalleryToolbar } from './GalleryToolbar';
import { Pagination } from './Pagination';
import type { GalleryRef } from './types';

const t = i18next.t;

// By its id, not by importing the router, which imports this screen.
const galleryRoute = getRouteApi('/app/gallery');

/** /gallery: one gallery actor per visit; the page and page size live in the URL. */
export function GalleryScreen() {
  const { toasts } = useAppActors();
  const search = galleryRoute.useSearch();
  const navigate = useNavigate();
  const page = search.page ?? 1;
  const limit = search.limit ?? IMAGE_PAGE_DEFAULT_LIMIT;
  const machine = useMemo(
    () =>
      liveGalleryMachine.provide({
        actions: {
          syncLocation: (_, params) => {
            void navigate({ to: '/gallery', search: gallerySearchOf({ page: params.page, limit: params.limit }) });
          },
          copyPrompt: (_, params) => {
            navigator.clipboard.writeText(params.prompt).then(
              () => toasts.send({ type: 'TOAST.SHOW', kind: 'success', message: t('gallery:modal.copied') }),
              (error: unknown) => console.warn('[gallery] copy failed', error),
            );
          },
          notifyDeleted: () => toasts.send({ type: 'TOAST.SHOW', kind: 'success', message: t('gallery:deleted') }),
          notifyDeleteFailed: (_, params) => {
            console.warn('[gallery] delete failed', params.error);
            toasts.send({ type: 'TOAST.SHOW', kind: 'error', message: t('gallery:deleteFailed') });
          },
        },
      }),
    [navigate, toasts],
  );
  const actor = useActorRef(machine, { input: { page, limit } });
  useLiveActor('gallery', actor);

  // Reload, Back and links change the URL: the machine follows it.
  useEffect(() => {
    actor.send({ type: 'LOCATION.SYNC', page, limit });
  }, [actor, page, limit]);

  return (
    <div className="mx-auto max-w-7xl px-4 py-6 sm:px-6">
      <GalleryToolbar actor={actor} />
      <GalleryBody actor={actor} />
      <GalleryModal actor={actor} />
      <ConfirmDelete actor={actor} />
    </div>
  );
}

function GalleryBody({ actor }: { actor: GalleryRef }) {
  const state = useSelector(actor, (s) =>
    s.matches('loading')
      ? 'loading'
      : s.matches('error')
        ? 'error'
        : s.matches('empty')
          ? 'empty'
          : s.matches('emptySearch')
            ? 'emptySearch'
            : 'ready',
  );
  if (state === 'loading') {
    return (
      <div role="status" aria-live="polite" className="mt-10 flex justify-center">
        <span className="h-8 w-8 animate-spin rounded-full border-4 border-indigo-200 border-t-indigo-600" />
        <span className="sr-only">{t('common:loading')}</span>
      </div>
    );
  }
  if (state === 'error') {
    return (
      <div role="alert" className="mt-10 rounded-2xl bg-white p-8 text-center shadow-sm ring-1 ring-slate-200">
        <p className="font-semibold text-slate-800">{t('gallery:error.title')}</p>
        <button
          type="button"
          onClick={() => actor.send({ type: 'RETRY' })}
          className="mt-4 rounded-lg bg-indigo-600 px-4 py-2 text-sm font-semibold text-white hover:bg-indigo-700"
        >
          {t('gallery:error.retry')}
        </button>
      </div>
    );
  }
  if (state === 'empty' || state === 'emptySearch') {
    return (
      <p
        data-testid="gallery-empty"
        className="mt-10 rounded-2xl bg-white p-8 text-center text-slate-700 shadow-sm ring-1 ring-slate-200"
      >
        {state === 'empty' ? t('gallery:empty.none') : t('gallery:empty.noneFound')}
      </p>
    );
  }
  return (
    <>
      <GalleryGrid actor={actor} />
      <Pagination actor={actor} />
    </>
  );
}

function GalleryModal({ actor }: { actor: GalleryRef }) {
  const open = useSelector(actor, (s) => s.matches({ ready: 'viewing' }));
  const image = useSelector(actor, (s) => (s.matches({ ready: 'viewing' }) ? selectedImage(s.context) : null));
  const hasPrevious = useSelector(actor, (s) => neighbourId(s.context, -1) !== null);
  const hasNext = useSelector(actor, (s) => neighbourId(s.context, 1) !== null);
  return (
    <ImageModal
      image={image}
      open={open}
      onClose={() => actor.send({ type: 'IMAGE.CLOSE' })}
      onDownload={(selected) => actor.send({ type: 'DOWNLOAD', image: selected })}
      onCopyPrompt={(prompt) => actor.send({ type: 'COPY_PROMPT', prompt })}
      onDelete={(selected) => actor.send({ type: 'DELETE.ASK', image: selected })}
      onPrevious={hasPrevious ? () => actor.send({ type: 'IMAGE.PREV' }) : undefined}
      onNext={hasNext ? () => actor.send({ type: 'IMAGE.NEXT' }) : undefined}
    />
  );
}
