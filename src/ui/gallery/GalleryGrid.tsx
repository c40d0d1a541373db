import { useSelector } from '@xstate/react';
import { Download, Eye, Trash2 } from 'lucide-react';
import { formatFileSize } from '../../i18n/format';
import { thumbnailSize } from '../../domain/image-record';
import { i18next } from '../../i18n';
import { visibleImages } from '../../machines/gallery';
import { formatDate } from '../dashboard/texts';
import type { GalleryRef } from './types';

const t = i18next.t;

const action =
  'flex flex-1 items-center justify-center gap-1 rounded-lg border border-slate-300 px-2 py-1.5 text-xs font-semibold text-slate-800 hover:bg-slate-50 focus-visible:outline-2 focus-visible:outline-indigo-600';

/** The cards of the loaded page, filtered by the search box. */
export function GalleryGrid({ actor }: { actor: GalleryRef }) {
  const images = useSelector(actor, (s) => visibleImages(s.context));
  // Six to a page fill two rows of three on a wide screen (four columns left a 4 + 2 grid).
  const wide = useSelector(actor, (s) => (s.context.limit === 6 ? 'lg:grid-cols-3' : 'lg:grid-cols-4'));
  if (images.length === 0) {
    return (
      <p
        data-testid="gallery-empty"
        className="rounded-2xl bg-white p-8 text-center text-slate-700 shadow-sm ring-1 ring-slate-200"
      >
        {t('gallery:empty.noneFound')}
      </p>
    );
  }
  return (
    <ul className={`grid grid-cols-2 gap-3 sm:grid-cols-3 sm:gap-4 ${wide}`} data-testid="gallery-grid">
      {images.map((image, index) => (
        <li
          key={image.id}
          data-testid="gallery-card"
          className="flex flex-col overflow-hidden rounded-xl bg-white shadow-sm ring-1 ring-slate-200"
        >
          <button
            type="button"
            onClick={() => actor.send({ type: 'IMAGE.OPEN', id: image.id })}
            aria-label={t('gallery:card.viewLabel', { prompt: image.prompt })}
            className="block aspect-square w-full overflow-hidden bg-slate-100 focus-visible:outline-4 focus-visible:outline-indigo-400"
          >
            <img
              src={image.thumbnailUrl}
              {...thumbnailSize(image.width, image.height)}
              alt=""
              // The first row is on screen at once; the rest wait until scrolled to.
              loading={index < 4 ? 'eager' : 'lazy'}
              decoding="async"
              className="h-full w-full object-cover"
            />
          </button>
          <div className="flex flex-1 flex-col gap-1 p-2 sm:p-3">
            <p className="line-clamp-2 text-sm font-medium wrap-anywhere text-slate-900" title={image.prompt}>
              {image.prompt}
            </p>
            <p className="text-xs text-slate-700">
              <span className="sr-only">{t('gallery:card.size')}: </span>
              {formatFileSize(image.fileSize)}
            </p>
            <p className="text-xs text-slate-700">
              <span className="sr-only">{t('gallery:card.created')}: </span>
              <time dateTime={image.createdAt}>{formatDate(image.createdAt)}</time>
            </p>
            <div className="mt-auto flex gap-1 pt-2">
              <button
                type="button"
                onClick={() => actor.send({ type: 'IMAGE.OPEN', id: image.id })}
                aria-label={t('gallery:card.viewLabel', { prompt: image.prompt })}
                className={action}
              >
                <Eye className="h-3.5 w-3.5" aria-hidden />
                <span className="hidden sm:inline">{t('gallery:card.view')}</span>
              </button>
              <button
                type="button"
                onClick={() => actor.send({ type: 'DOWNLOAD', image })}
                aria-label={t('gallery:card.downloadLabel', { prompt: image.prompt })}
                className={action}
              >
                <Download className="h-3.5 w-3.5" aria-hidden />
                <span className="hidden sm:inline">{t('gallery:card.download')}</span>
              </button>
              <button
                type="button"
                onClick={() => actor.send({ type: 'DELETE.ASK', image })}
                aria-label={t('gallery:card.deleteLabel', { prompt: image.prompt })}
                className={`${action} text-red-700`}
              >
                <Trash2 className="h-3.5 w-3.5" aria-hidden />
              </button>
            </div>
          </div>
        </li>
      ))}
    </ul>
  );
}
