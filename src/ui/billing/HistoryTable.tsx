import type { PaymentHistoryItem } from '../../domain/billing';
import { i18next } from '../../i18n';
import { formatDateTime, historyDescription, money, paymentStatusName, refundText } from './texts';

const t = i18next.t;

const statusClass: Record<string, string> = {
  succeeded: 'bg-emerald-50 text-emerald-800 ring-emerald-200',
  pending: 'bg-amber-50 text-amber-900 ring-amber-200',
  canceled: 'bg-slate-100 text-slate-700 ring-slate-200',
};

function StatusBadge({ status }: { status: string }) {
  return (
    <span
      className={`inline-block rounded-full px-2 py-0.5 text-xs font-medium ring-1 ${statusClass[status] ?? statusClass.canceled}`}
    >
      {paymentStatusName(status)}
    </span>
  );
}

/** The payment's refund, when it has one: in progress, done, or declined and retried. */
function RefundNote({ payment }: { payment: PaymentHistoryItem }) {
  const text = refundText(payment);
  if (!text) return null;
  return (
    <p className="mt-1 text-xs text-slate-600" data-testid="history-refund">
      {text}
    </p>
  );
}

/** SPEC 2 "Transaction history": date, description, amount, status; cards on a phone. */
export function HistoryTable({ payments }: { payments: PaymentHistoryItem[] }) {
  return (
    <section
      aria-labelledby="history-heading"
      data-testid="payment-history"
      className="rounded-2xl border border-slate-200 bg-white p-5 shadow-sm"
    >
      <h2 id="history-heading" className="mb-3 text-lg font-semibold text-slate-900">
        {t('billing:history.heading')}
      </h2>
      {payments.length === 0 ? (
        <p className="text-sm text-slate-600" data-testid="history-empty">
          {t('billing:history.empty')}
        </p>
      ) : (
        <>
          <table className="hidden w-full text-left text-sm sm:table">
            <thead className="border-b border-slate-200 text-slate-600">
              <tr>
                <th scope="col" className="py-2 pr-4 font-medium">
                  {t('billing:history.date')}
                </th>
                <th scope="col" className="py-2 pr-4 font-medium">
                  {t('billing:history.description')}
                </th>
                <th scope="col" className="py-2 pr-4 text-right font-medium">
                  {t('billing:history.amount')}
                </th>
                <th scope="col" className="py-2 font-medium">
                  {t('billing:history.status')}
                </th>
              </tr>
            </thead>
            <tbody>
              {payments.map((payment) => (
                <tr key={payment.id} className="border-b border-slate-100 last:border-0" data-testid="history-row">
                  <td className="py-2 pr-4 whitespace-nowrap text-slate-700">{formatDateTime(payment.createdAt)}</td>
                  <td className="py-2 pr-4 text-slate-900">{historyDescription(payment)}</td>
                  <td className="py-2 pr-4 text-right font-medium whitespace-nowrap text-slate-900">
                    {money(payment.amount, payment.currency)}
                  </td>
                  <td className="py-2">
                    <StatusBadge status={payment.status} />
                    <RefundNote payment={payment} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <ul className="space-y-3 sm:hidden">
            {payments.map((payment) => (
              <li key={payment.id} className="rounded-xl border border-slate-200 p-3" data-testid="history-card">
                <div className="flex items-start justify-between gap-2">
                  <span className="font-medium text-slate-900">{historyDescription(payment)}</span>
                  <span className="font-semibold whitespace-nowrap text-slate-900">
                    {money(payment.amount, payment.currency)}
                  </span>
                </div>
                <div className="mt-1 flex items-center justify-between gap-2 text-sm text-slate-600">
                  <span>{formatDateTime(payment.createdAt)}</span>
                  <StatusBadge status={payment.status} />
                </div>
                <RefundNote payment={payment} />
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
