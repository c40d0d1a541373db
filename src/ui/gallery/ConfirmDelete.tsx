import { useSelector } from '@xstate/react';
import { AlertDialog } from 'radix-ui';
import { thumbnailSize } from '../../domain/image-record';
import { i18next } from '../../i18n';
import type { GalleryRef } from './types';

const t = i18next.t;

/** Delete asks first; the machine holds the image until the answer. */
export function ConfirmDelete({ actor }: { actor: GalleryRef }) {
  const open = useSelector(actor, (s) => s.matches({ ready: 'confirming' }) || s.matches({ ready: 'deleting' }));
  const deleting = useSelector(actor, (s) => s.matches({ ready: 'deleting' }));
  const image = useSelector(actor, (s) => s.context.doomed);
  return (
    <AlertDialog.Root
      open={open && image !== null}
      onOpenChange={(next) => !next && actor.send({ type: 'DELETE.CANCEL' })}
    >
      <AlertDialog.Portal>
        <AlertDialog.Overlay className="fixed inset-0 z-[60] bg-slate-900/60" />
        <AlertDialog.Content
          data-testid="confirm-delete"
          className="fixed left-1/2 top-1/2 z-[70] w-[calc(100%-2rem)] max-w-md -translate-x-1/2 -translate-y-1/2 rounded-2xl bg-white p-5 shadow-2xl"
        >
          <AlertDialog.Title className="text-lg font-semibold">{t('gallery:confirm.title')}</AlertDialog.Title>
          {image && (
            <div className="mt-3 flex gap-3">
              <img
                src={image.thumbnailUrl}
                {...thumbnailSize(image.width, image.height)}
                alt=""
                className="h-16 w-16 shrink-0 rounded-lg object-cover"
              />
              <p className="line-clamp-3 min-w-0 text-sm wrap-anywhere text-slate-800">{image.prompt}</p>
            </div>
          )}
          <AlertDialog.Description className="mt-3 text-sm text-slate-700">
            {t('gallery:confirm.text')}
          </AlertDialog.Description>
          <div className="mt-5 flex justify-end gap-2">
            <AlertDialog.Cancel
              disabled={deleting}
              className="rounded-lg border border-slate-300 px-4 py-2 text-sm font-semibold text-slate-800 hover:bg-slate-50"
            >
              {t('gallery:confirm.cancel')}
            </AlertDialog.Cancel>
            <button
              type="button"
              disabled={deleting}
              onClick={() => actor.send({ type: 'DELETE.CONFIRM' })}
              className="rounded-lg bg-red-700 px-4 py-2 text-sm font-semibold text-white hover:bg-red-800 disabled:opacity-70"
            >
              {deleting ? t('gallery:confirm.deleting') : t('gallery:confirm.confirm')}
            </button>
          </div>
        </AlertDialog.Content>
      </AlertDialog.Portal>
    </AlertDialog.Root>
  );
}
