import type { LedgerPage } from '../../domain/billing';
import { i18next } from '../../i18n';
import { formatNumber } from '../../i18n/format';
import { Spinner } from '../common/Spinner';
import { formatDateTime, ledgerDescription } from './texts';

const t = i18next.t;

function Delta({ delta }: { delta: number }) {
  return (
    <span className={`font-semibold whitespace-nowrap ${delta < 0 ? 'text-red-700' : 'text-emerald-700'}`}>
      {delta > 0 ? `+${formatNumber(delta)}` : `−${formatNumber(Math.abs(delta))}`}
    </span>
  );
}

/** The spend history: every ledger row of the user, worded from its kind, paged. */
export function LedgerTable({
  state,
  ledger,
  page,
  onPage,
  onRetry,
}: {
  state: 'loading' | 'ready' | 'error';
  ledger: LedgerPage | null;
  page: number;
  onPage: (page: number) => void;
  onRetry: () => void;
}) {
  const pagination = ledger?.pagination;
  return (
    <section
      aria-labelledby="ledger-heading"
      aria-busy={state === 'loading'}
      data-testid="spend-history"
      className="rounded-2xl border border-slate-200 bg-white p-5 shadow-sm"
    >
      <h2 id="ledger-heading" className="text-lg font-semibold text-slate-900">
        {t('billing:ledger.heading')}
      </h2>
      <p className="mt-1 mb-3 text-sm text-slate-600">{t('billing:ledger.subtitle')}</p>
      {state === 'error' ? (
        <div role="alert" className="flex flex-wrap items-center gap-3 text-sm text-red-800">
          {t('billing:ledger.loadFailed')}
          <button
            type="button"
            onClick={onRetry}
            data-testid="ledger-retry"
            className="rounded-lg border border-slate-300 px-3 py-1.5 font-medium text-slate-800 hover:bg-slate-50"
          >
            {t('billing:retry')}
          </button>
        </div>
      ) : !ledger ? (
        <div className="flex justify-center py-6">
          <Spinner />
        </div>
      ) : ledger.entries.length === 0 ? (
        <p className="text-sm text-slate-600">{t('billing:ledger.empty')}</p>
      ) : (
        <div className={state === 'loading' ? 'opacity-60' : ''}>
          <table className="hidden w-full text-left text-sm sm:table">
            <thead className="border-b border-slate-200 text-slate-600">
              <tr>
                <th scope="col" className="py-2 pr-4 font-medium">
                  {t('billing:ledger.date')}
                </th>
                <th scope="col" className="py-2 pr-4 font-medium">
                  {t('billing:ledger.operation')}
                </th>
                <th scope="col" className="py-2 pr-4 text-right font-medium">
                  {t('billing:ledger.change')}
                </th>
                <th scope="col" className="py-2 text-right font-medium">
                  {t('billing:ledger.balanceAfter')}
                </th>
              </tr>
            </thead>
            <tbody>
              {ledger.entries.map((entry) => (
                <tr key={entry.id} className="border-b border-slate-100 last:border-0" data-testid="ledger-row">
                  <td className="py-2 pr-4 whitespace-nowrap text-slate-700">{formatDateTime(entry.createdAt)}</td>
                  <td className="py-2 pr-4 text-slate-900">{ledgerDescription(entry)}</td>
                  <td className="py-2 pr-4 text-right">
                    <Delta delta={entry.delta} />
                  </td>
                  <td className="py-2 text-right text-slate-900">{formatNumber(entry.balanceAfter)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <ul className="space-y-3 sm:hidden">
            {ledger.entries.map((entry) => (
              <li key={entry.id} className="rounded-xl border border-slate-200 p-3" data-testid="ledger-card">
                <div className="flex items-start justify-between gap-2">
                  <span className="text-slate-900">{ledgerDescription(entry)}</span>
                  <Delta delta={entry.delta} />
                </div>
                <div className="mt-1 flex justify-between gap-2 text-sm text-slate-600">
                  <span>{formatDateTime(entry.createdAt)}</span>
                  <span>
                    {t('billing:ledger.balanceAfter')}: {formatNumber(entry.balanceAfter)}
                  </span>
                </div>
              </li>
            ))}
          </ul>
          {pagination && pagination.totalPages > 1 && (
            <nav
              aria-label={t('billing:ledger.pages')}
              className="mt-4 flex items-center justify-between gap-2 text-sm"
            >
              <button
                type="button"
                disabled={!pagination.hasPrev || state === 'loading'}
                onClick={() => onPage(page - 1)}
                data-testid="ledger-prev"
                className="rounded-lg border border-slate-300 px-3 py-1.5 font-medium text-slate-800 hover:bg-slate-50 disabled:opacity-50"
              >
                {t('billing:ledger.previous')}
              </button>
              <span className="text-slate-700" data-testid="ledger-page">
                {t('billing:ledger.page', { page: pagination.currentPage, total: pagination.totalPages })}
              </span>
              <button
                type="button"
                disabled={!pagination.hasNext || state === 'loading'}
                onClick={() => onPage(page + 1)}
                data-testid="ledger-next"
                className="rounded-lg border border-slate-300 px-3 py-1.5 font-medium text-slate-800 hover:bg-slate-50 disabled:opacity-50"
              >
                {t('billing:ledger.next')}
              </button>
            </nav>
          )}
        </div>
      )}
    </section>
  );
}
