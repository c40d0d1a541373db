import { Link } from '@tanstack/react-router';
import { useSelector } from '@xstate/react';
import { thumbnailSize } from '../../domain/image-record';
import { i18next } from '../../i18n';
import { Spinner } from '../common/Spinner';
import type { GenerationRef } from './types';

const t = i18next.t;

/** SPEC: the latest 6 images, with a Show All link to /gallery. */
export function RecentImages({ actor }: { actor: GenerationRef }) {
  const images = useSelector(actor, (s) => s.context.recent);
  const loading = useSelector(actor, (s) => s.matches({ recent: 'loading' }));
  return (
    <section aria-labelledby="recent-title" className="rounded-2xl bg-white p-5 shadow-sm ring-1 ring-slate-200">
      <div className="flex items-center justify-between">
        <h2 id="recent-title" className="text-lg font-semibold">
          {t('generation:recent.title')}
        </h2>
        <Link to="/gallery" className="text-sm font-semibold text-indigo-600 hover:underline">
          {t('generation:recent.showAll')}
        </Link>
      </div>
      {loading && images.length === 0 ? (
        <div className="mt-4 flex justify-center">
          <Spinner />
        </div>
      ) : images.length === 0 ? (
        <p className="mt-4 text-sm text-slate-500">{t('generation:recent.empty')}</p>
      ) : (
        <ul className="mt-4 grid grid-cols-3 gap-2" data-testid="recent-images">
          {images.map((image) => (
            <li key={image.id}>
              <button
                type="button"
                aria-label={t('generation:recent.open', { prompt: image.prompt })}
                onClick={() => actor.send({ type: 'IMAGE.OPEN', image })}
                className="block aspect-square w-full overflow-hidden rounded-lg ring-1 ring-slate-200 hover:ring-2 hover:ring-indigo-400 focus-visible:ring-4 focus-visible:ring-indigo-300"
              >
                <img
                  src={image.thumbnailUrl}
                  {...thumbnailSize(image.width, image.height)}
                  alt=""
                  loading="lazy"
                  decoding="async"
                  className="h-full w-full object-cover"
                />
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
