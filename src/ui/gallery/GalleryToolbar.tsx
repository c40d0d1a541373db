import { useSelector } from '@xstate/react';
import { RefreshCw, Search, X } from 'lucide-react';
import { GALLERY_PAGE_SIZES, IMAGE_SEARCH_MAX_LENGTH } from '../../domain/image-record';
import { i18next } from '../../i18n';
import type { GalleryRef } from './types';

const t = i18next.t;

/** The title, total, "page x of y", refresh, the search box and the page-size selector. */
export function GalleryToolbar({ actor }: { actor: GalleryRef }) {
  const pagination = useSelector(actor, (s) => s.context.pagination);
  const page = useSelector(actor, (s) => s.context.page);
  const limit = useSelector(actor, (s) => s.context.limit);
  const filter = useSelector(actor, (s) => s.context.filter);
  const search = useSelector(actor, (s) => s.context.search);
  const loading = useSelector(actor, (s) => s.matches('loading'));
  const total = pagination?.total ?? 0;
  const pages = Math.max(1, pagination?.totalPages ?? 1);
  return (
    <header className="mb-6 space-y-4">
      {/* The title and the refresh button share a row that never wraps, and the summary has
          its line before the count arrives: the search box below keeps its place on a phone. */}
      <div>
        <div className="flex items-center justify-between gap-3">
          <h1 className="min-w-0 text-2xl font-bold">{t('gallery:title')}</h1>
          <button
            type="button"
            onClick={() => actor.send({ type: 'REFRESH' })}
            disabled={loading}
            className="flex shrink-0 items-center gap-2 rounded-lg border border-slate-300 bg-white px-3 py-2 text-sm font-semibold text-slate-800 hover:bg-slate-50 disabled:opacity-60"
          >
            <RefreshCw className={`h-4 w-4 ${loading ? 'animate-spin' : ''}`} aria-hidden />
            {t('gallery:refresh')}
          </button>
        </div>
        <p className="mt-1 min-h-5 text-sm text-slate-700" aria-live="polite" data-testid="gallery-summary">
          {pagination && (
            <>
              <span data-testid="gallery-total">{t('gallery:total', { count: total })}</span>
              <span aria-hidden> · </span>
              <span data-testid="gallery-page-of">{t('gallery:pageOf', { page: Math.min(page, pages), pages })}</span>
            </>
          )}
        </p>
      </div>
      <div className="flex flex-col gap-3 sm:flex-row sm:items-end">
        <form
          role="search"
          className="flex flex-1 flex-col gap-2 sm:flex-row sm:items-end"
          onSubmit={(event) => {
            event.preventDefault();
            actor.send({ type: 'SEARCH.ALL' });
          }}
        >
          <label className="flex-1 text-sm font-medium text-slate-800">
            {t('gallery:search.label')}
            <span className="relative mt-1 block">
              <Search
                className="pointer-events-none absolute left-3 top-1/2 h-4 w-4 -translate-y-1/2 text-slate-500"
                aria-hidden
              />
              <input
                type="search"
                value={filter}
                maxLength={IMAGE_SEARCH_MAX_LENGTH}
                placeholder={t('gallery:search.placeholder')}
                onChange={(event) => actor.send({ type: 'FILTER.CHANGE', text: event.target.value })}
                className="w-full rounded-lg border border-slate-300 bg-white py-2 pl-9 pr-3 text-sm text-slate-900 placeholder:text-slate-500 focus:border-indigo-500 focus:outline-none focus:ring-2 focus:ring-indigo-200"
              />
            </span>
          </label>
          <button
            type="submit"
            disabled={filter.trim() === ''}
            className="rounded-lg bg-indigo-600 px-4 py-2 text-sm font-semibold text-white hover:bg-indigo-700 disabled:bg-slate-300 disabled:text-slate-700"
          >
            {t('gallery:search.all')}
          </button>
        </form>
        <label className="text-sm font-medium text-slate-800">
          {t('gallery:pageSize')}
          <select
            value={limit}
            onChange={(event) => actor.send({ type: 'LIMIT.SET', limit: Number(event.target.value) })}
            className="mt-1 block w-full rounded-lg border border-slate-300 bg-white px-3 py-2 text-sm text-slate-900 sm:w-24"
          >
            {GALLERY_PAGE_SIZES.map((size) => (
              <option key={size} value={size}>
                {size}
              </option>
            ))}
          </select>
        </label>
      </div>
      {search !== null && (
        <div className="flex flex-wrap items-center gap-2 text-sm text-slate-800" data-testid="gallery-search">
          <span>{t('gallery:search.results', { query: search })}</span>
          <button
            type="button"
            onClick={() => actor.send({ type: 'SEARCH.CLEAR' })}
            className="flex items-center gap-1 rounded-full border border-slate-300 bg-white px-3 py-1 font-semibold hover:bg-slate-50"
          >
            <X className="h-3.5 w-3.5" aria-hidden />
            {t('gallery:search.clear')}
          </button>
        </div>
      )}
    </header>
  );
}
