import { useSelector } from '@xstate/react';
import { ChevronLeft, ChevronRight } from 'lucide-react';
import { paginationWindow } from '../../domain/gallery';
import { i18next } from '../../i18n';
import type { GalleryRef } from './types';

const t = i18next.t;

const base =
  'flex h-10 min-w-10 items-center justify-center rounded-lg px-2 text-sm font-semibold focus-visible:outline-2 focus-visible:outline-indigo-600';

/** SPEC's pagination: previous/next and the window of numbered pages; hidden with one page. */
export function Pagination({ actor }: { actor: GalleryRef }) {
  const pagination = useSelector(actor, (s) => s.context.pagination);
  const page = useSelector(actor, (s) => s.context.page);
  if (!pagination || pagination.totalPages <= 1) return null;
  const slots = paginationWindow(page, pagination.totalPages);
  const go = (target: number) => actor.send({ type: 'PAGE.GO', page: target });
  return (
    <nav
      aria-label={t('gallery:pagination.label')}
      className="mt-6 flex justify-center"
      data-testid="gallery-pagination"
    >
      <ul className="flex flex-wrap items-center gap-1">
        <li>
          <button
            type="button"
            disabled={!pagination.hasPrev}
            onClick={() => go(page - 1)}
            aria-label={t('gallery:pagination.previous')}
            className={`${base} border border-slate-300 bg-white text-slate-800 hover:bg-slate-50 disabled:opacity-50`}
          >
            <ChevronLeft className="h-4 w-4" aria-hidden />
          </button>
        </li>
        {slots.map((slot) =>
          slot.kind === 'gap' ? (
            <li key={slot.key} className="px-1 text-slate-700" aria-label={t('gallery:pagination.gap')}>
              …
            </li>
          ) : (
            <li key={slot.page}>
              <button
                type="button"
                onClick={() => go(slot.page)}
                aria-label={t('gallery:pagination.page', { page: slot.page })}
                aria-current={slot.page === page ? 'page' : undefined}
                className={`${base} ${
                  slot.page === page
                    ? 'bg-indigo-600 text-white'
                    : 'border border-slate-300 bg-white text-slate-800 hover:bg-slate-50'
                }`}
              >
                {slot.page}
              </button>
            </li>
          ),
        )}
        <li>
          <button
            type="button"
            disabled={!pagination.hasNext}
            onClick={() => go(page + 1)}
            aria-label={t('gallery:pagination.next')}
            className={`${base} border border-slate-300 bg-white text-slate-800 hover:bg-slate-50 disabled:opacity-50`}
          >
            <ChevronRight className="h-4 w-4" aria-hidden />
          </button>
        </li>
      </ul>
    </nav>
  );
}
