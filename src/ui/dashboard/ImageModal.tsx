import { Link } from '@tanstack/react-router';
import { useSelector } from '@xstate/react';
import { Download, RefreshCw, X } from 'lucide-react';
import { Dialog } from 'radix-ui';
import { formatFileSize } from '../../domain/format';
import { i18next } from '../../i18n';
import { formatDate, styleName } from './texts';
import type { GenerationRef } from './types';

const t = i18next.t;

/** SPEC's image modal on the dashboard: details, Download, Regenerate and View All Images. */
export function ImageModal({ actor }: { actor: GenerationRef }) {
  const open = useSelector(actor, (s) => s.matches({ modal: 'open' }));
  const image = useSelector(actor, (s) => s.context.selected);
  const close = () => actor.send({ type: 'IMAGE.CLOSE' });
  return (
    <Dialog.Root open={open && image !== null} onOpenChange={(next) => !next && close()}>
      <Dialog.Portal>
        <Dialog.Overlay className="fixed inset-0 z-40 bg-slate-900/60" />
        <Dialog.Content
          data-testid="image-modal"
          className="fixed left-1/2 top-1/2 z-50 max-h-[92vh] w-[calc(100%-2rem)] max-w-3xl -translate-x-1/2 -translate-y-1/2 overflow-y-auto rounded-2xl bg-white p-5 shadow-2xl"
        >
          {image && (
            <>
              <div className="flex items-start justify-between gap-4">
                <Dialog.Title className="text-lg font-semibold">{t('generation:modal.title')}</Dialog.Title>
                <Dialog.Close
                  aria-label={t('generation:modal.close')}
                  className="rounded-lg p-1 text-slate-500 hover:bg-slate-100"
                >
                  <X className="h-5 w-5" />
                </Dialog.Close>
              </div>
              <img
                src={image.imageUrl}
                alt={t('generation:result.alt', { prompt: image.prompt })}
                className="mx-auto mt-4 max-h-[50vh] w-auto rounded-xl object-contain"
              />
              <Dialog.Description asChild>
                <dl className="mt-4 grid grid-cols-[auto_1fr] gap-x-4 gap-y-1 text-sm">
                  <dt className="text-slate-500">{t('generation:modal.prompt')}</dt>
                  <dd data-testid="modal-prompt" className="break-words">
                    {image.prompt}
                  </dd>
                  <dt className="text-slate-500">{t('generation:modal.style')}</dt>
                  <dd>{styleName(image.stylePreset)}</dd>
                  <dt className="text-slate-500">{t('generation:modal.size')}</dt>
                  <dd>{image.size}</dd>
                  <dt className="text-slate-500">{t('generation:modal.format')}</dt>
                  <dd>{image.mimeType}</dd>
                  <dt className="text-slate-500">{t('generation:modal.fileSize')}</dt>
                  <dd>{formatFileSize(image.fileSize)}</dd>
                  <dt className="text-slate-500">{t('generation:modal.created')}</dt>
                  <dd>{formatDate(image.createdAt)}</dd>
                </dl>
              </Dialog.Description>
              <div className="mt-5 flex flex-wrap gap-2">
                <button
                  type="button"
                  onClick={() => actor.send({ type: 'DOWNLOAD', image })}
                  className="flex items-center gap-2 rounded-lg bg-indigo-600 px-4 py-2 text-sm font-semibold text-white hover:bg-indigo-700"
                >
                  <Download className="h-4 w-4" aria-hidden />
                  {t('generation:modal.download')}
                </button>
                <Link
                  to="/dashboard"
                  search={{ prompt: image.prompt }}
                  onClick={close}
                  data-testid="modal-regenerate"
                  className="flex items-center gap-2 rounded-lg border border-slate-300 px-4 py-2 text-sm font-semibold text-slate-700 hover:bg-slate-50"
                >
                  <RefreshCw className="h-4 w-4" aria-hidden />
                  {t('generation:modal.regenerate')}
                </Link>
                <Link
                  to="/gallery"
                  className="flex items-center gap-2 rounded-lg px-4 py-2 text-sm font-semibold text-indigo-600 hover:underline"
                >
                  {t('generation:modal.viewAll')}
                </Link>
              </div>
            </>
          )}
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}
