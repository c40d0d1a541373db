import { Link } from '@tanstack/react-router';
import { ChevronLeft, ChevronRight, Copy, Download, RefreshCw, Trash2, X } from 'lucide-react';
import { Dialog } from 'radix-ui';
import type { KeyboardEvent } from 'react';
import { formatFileSize } from '../../i18n/format';
import { regenerateSearch } from '../../domain/gallery';
import type { ImageRecord } from '../../domain/image-record';
import { i18next } from '../../i18n';
import { formatDate, modelName, styleName } from '../dashboard/texts';

const t = i18next.t;

export interface ImageModalProps {
  image: ImageRecord | null;
  open: boolean;
  onClose: () => void;
  onDownload: (image: ImageRecord) => void;
  /** The gallery's Copy Prompt (SPEC: gallery only). */
  onCopyPrompt?: (prompt: string) => void;
  onDelete?: (image: ImageRecord) => void;
  /** Previous/next image (buttons and the arrow keys); undefined at either end. */
  onPrevious?: () => void;
  onNext?: () => void;
  /** The dashboard's View All Images link to /gallery. */
  viewAll?: boolean;
}

const secondary =
  'flex items-center gap-2 rounded-lg border border-slate-300 px-4 py-2 text-sm font-semibold text-slate-700 hover:bg-slate-50 focus-visible:outline-2 focus-visible:outline-indigo-600';

/**
 * SPEC's image modal, shared by the dashboard and the gallery: the full image, its
 * details, Download, Regenerate (every parameter to /dashboard) and, where given, Copy
 * Prompt, Delete, previous/next and View All Images.
 */
export function ImageModal(props: ImageModalProps) {
  const { image, open, onClose, onDownload, onCopyPrompt, onDelete, onPrevious, onNext, viewAll } = props;
  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === 'ArrowLeft' && onPrevious) {
      event.preventDefault();
      onPrevious();
    } else if (event.key === 'ArrowRight' && onNext) {
      event.preventDefault();
      onNext();
    }
  };
  const navigable = onPrevious !== undefined || onNext !== undefined;
  return (
    <Dialog.Root open={open && image !== null} onOpenChange={(next) => !next && onClose()}>
      <Dialog.Portal>
        <Dialog.Overlay className="fixed inset-0 z-40 bg-slate-900/60" />
        <Dialog.Content
          data-testid="image-modal"
          onKeyDown={onKeyDown}
          className="fixed left-1/2 top-1/2 z-50 max-h-[92vh] w-[calc(100%-1rem)] max-w-3xl -translate-x-1/2 -translate-y-1/2 overflow-y-auto rounded-2xl bg-white p-4 shadow-2xl sm:w-[calc(100%-2rem)] sm:p-5"
        >
          {image && (
            <>
              <div className="flex items-start justify-between gap-4">
                <Dialog.Title className="text-lg font-semibold">{t('generation:modal.title')}</Dialog.Title>
                <Dialog.Close
                  aria-label={t('generation:modal.close')}
                  className="rounded-lg p-1 text-slate-600 hover:bg-slate-100"
                >
                  <X className="h-5 w-5" />
                </Dialog.Close>
              </div>
              <div className="relative mt-4">
                <img
                  key={image.id}
                  src={image.imageUrl}
                  width={image.width ?? undefined}
                  height={image.height ?? undefined}
                  alt={t('generation:result.alt', { prompt: image.prompt })}
                  className="mx-auto h-auto max-h-[50vh] w-auto max-w-full rounded-xl object-contain"
                />
                {navigable && (
                  <>
                    <button
                      type="button"
                      onClick={onPrevious}
                      disabled={!onPrevious}
                      aria-label={t('gallery:modal.previous')}
                      data-testid="modal-previous"
                      className="absolute left-1 top-1/2 -translate-y-1/2 rounded-full bg-white/90 p-2 text-slate-800 shadow ring-1 ring-slate-300 hover:bg-white disabled:invisible"
                    >
                      <ChevronLeft className="h-5 w-5" aria-hidden />
                    </button>
                    <button
                      type="button"
                      onClick={onNext}
                      disabled={!onNext}
                      aria-label={t('gallery:modal.next')}
                      data-testid="modal-next"
                      className="absolute right-1 top-1/2 -translate-y-1/2 rounded-full bg-white/90 p-2 text-slate-800 shadow ring-1 ring-slate-300 hover:bg-white disabled:invisible"
                    >
                      <ChevronRight className="h-5 w-5" aria-hidden />
                    </button>
                  </>
                )}
              </div>
              <Dialog.Description asChild>
                <dl className="mt-4 grid grid-cols-[auto_1fr] gap-x-4 gap-y-1 text-sm">
                  <dt className="text-slate-600">{t('generation:modal.prompt')}</dt>
                  <dd data-testid="modal-prompt" className="min-w-0 wrap-anywhere">
                    {image.prompt}
                  </dd>
                  {image.negativePrompt && (
                    <>
                      <dt className="text-slate-600">{t('gallery:modal.negativePrompt')}</dt>
                      <dd className="min-w-0 wrap-anywhere">{image.negativePrompt}</dd>
                    </>
                  )}
                  <dt className="text-slate-600">{t('gallery:modal.model')}</dt>
                  <dd>
                    {modelName(image.model)}
                    {image.modelVariant ? ` · ${image.modelVariant}` : ''}
                  </dd>
                  <dt className="text-slate-600">{t('generation:modal.style')}</dt>
                  <dd>{styleName(image.stylePreset)}</dd>
                  <dt className="text-slate-600">{t('generation:modal.size')}</dt>
                  <dd>
                    {image.size}
                    {image.aspectRatio ? ` (${image.aspectRatio})` : ''}
                  </dd>
                  {image.seed !== null && (
                    <>
                      <dt className="text-slate-600">{t('gallery:modal.seed')}</dt>
                      <dd>{image.seed}</dd>
                    </>
                  )}
                  <dt className="text-slate-600">{t('generation:modal.format')}</dt>
                  <dd>{image.mimeType}</dd>
                  <dt className="text-slate-600">{t('generation:modal.fileSize')}</dt>
                  <dd>{formatFileSize(image.fileSize)}</dd>
                  <dt className="text-slate-600">{t('generation:modal.created')}</dt>
                  <dd>{formatDate(image.createdAt)}</dd>
                </dl>
              </Dialog.Description>
              {navigable && <p className="mt-3 hidden text-xs text-slate-600 sm:block">{t('gallery:modal.keys')}</p>}
              <div className="mt-5 flex flex-wrap gap-2">
                <button
                  type="button"
                  onClick={() => onDownload(image)}
                  className="flex items-center gap-2 rounded-lg bg-indigo-600 px-4 py-2 text-sm font-semibold text-white hover:bg-indigo-700"
                >
                  <Download className="h-4 w-4" aria-hidden />
                  {t('generation:modal.download')}
                </button>
                {onCopyPrompt && (
                  <button type="button" onClick={() => onCopyPrompt(image.prompt)} className={secondary}>
                    <Copy className="h-4 w-4" aria-hidden />
                    {t('gallery:modal.copy')}
                  </button>
                )}
                <Link
                  to="/dashboard"
                  search={regenerateSearch(image)}
                  onClick={onClose}
                  data-testid="modal-regenerate"
                  className={secondary}
                >
                  <RefreshCw className="h-4 w-4" aria-hidden />
                  {t('generation:modal.regenerate')}
                </Link>
                {onDelete && (
                  <button
                    type="button"
                    onClick={() => onDelete(image)}
                    className="flex items-center gap-2 rounded-lg border border-red-300 px-4 py-2 text-sm font-semibold text-red-700 hover:bg-red-50"
                  >
                    <Trash2 className="h-4 w-4" aria-hidden />
                    {t('gallery:modal.delete')}
                  </button>
                )}
                {viewAll && (
                  <Link
                    to="/gallery"
                    className="flex items-center gap-2 rounded-lg px-4 py-2 text-sm font-semibold text-indigo-700 hover:underline"
                  >
                    {t('generation:modal.viewAll')}
                  </Link>
                )}
              </div>
            </>
          )}
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}
