import type { FastifyInstance } from 'fastify';
import { pathOf } from '../../src/domain/api/contract';
import { sandboxCheckoutPageEndpoint, sandboxDecisionEndpoint } from '../../src/domain/api/payments';
import { formatRub, SANDBOX_DECLINE_REASONS, type SandboxDeclineReason } from '../../src/domain/billing';
import type { AuthService } from '../auth/service';
import { optionalUser, signInAndBack } from '../auth/session';
import { AppError } from '../errors';
import { route } from '../http/contract-route';
import type { SandboxProvider } from '../providers/payments/sandbox';
import type { PaymentsService } from './service';

const SANDBOX_ID = /^sb_[0-9a-f-]{36}$/;

function formField(body: unknown, name: string): unknown {
  return typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[name] : undefined;
}

/** Whether the sandbox payment was made for `userId` (its metadata names the payer, as ours does). */
function belongsTo(row: { metadata: string }, userId: number): boolean {
  try {
    const metadata = JSON.parse(row.metadata) as { userId?: unknown } | null;
    return metadata?.userId === String(userId);
  } catch {
    return false;
  }
}

/**
 * The sandbox's checkout page, standing in for YooKassa's: a server-rendered page marked
 * as a test, in Russian and English at once, with no script (the app's CSP allows none
 * inline). Pay and Decline post back here; the decision is then announced to the billing
 * service as YooKassa's notification would be, and the browser goes to the return address.
 *
 * The page belongs to the payer's session: without one the browser signs in and comes
 * back; anyone else's session sees a 404, as for an unknown id, so holding a checkout
 * address is not enough to pay or decline another user's payment.
 */
export function sandboxRoutes(
  app: FastifyInstance,
  deps: { sandbox: SandboxProvider; payments: PaymentsService; auth: AuthService },
): void {
  const { sandbox, payments, auth } = deps;

  void app.register(async (scope) => {
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 4096 },
      (_request, body, done) => {
        done(null, Object.fromEntries(new URLSearchParams(typeof body === 'string' ? body : '')));
      },
    );

    route(scope, sandboxCheckoutPageEndpoint, {}, async (request, reply) => {
      const { id } = request.params;
      if (!SANDBOX_ID.test(id)) throw new AppError('NOT_FOUND');
      const user = await optionalUser(auth, request);
      if (!user) return reply.redirect(signInAndBack(pathOf(sandboxCheckoutPageEndpoint, { id })), 302);
      const row = await sandbox.find(id);
      if (!row || !belongsTo(row, user.id)) throw new AppError('NOT_FOUND');
      return reply
        .header('cache-control', 'no-store')
        .type('text/html; charset=utf-8')
        .send(checkoutPage({ ...row, amount: formatRub(row.amountKopecks) }));
    });

    route(scope, sandboxDecisionEndpoint, {}, async (request, reply) => {
      if (!SANDBOX_ID.test(request.params.id)) throw new AppError('NOT_FOUND');
      const user = await optionalUser(auth, request);
      if (!user) throw new AppError('UNAUTHORIZED');
      const row = await sandbox.find(request.params.id);
      if (!row || !belongsTo(row, user.id)) throw new AppError('NOT_FOUND');
      const action = formField(request.body, 'action');
      const reason = formField(request.body, 'reason') ?? 'insufficient_funds';
      if (action !== 'pay' && action !== 'decline') throw new AppError('VALIDATION_ERROR');
      if (action === 'decline' && !(SANDBOX_DECLINE_REASONS as readonly unknown[]).includes(reason)) {
        throw new AppError('VALIDATION_ERROR');
      }
      const decided = await sandbox.decide(
        row.id,
        action === 'pay' ? { action } : { action, reason: reason as SandboxDeclineReason },
      );
      if (decided) {
        try {
          await payments.notified(decided.id);
        } catch (error) {
          // The return route and the reconciler settle it anyway.
          request.log.error({ err: error }, 'sandbox notification failed');
        }
      }
      return reply.redirect(row.returnUrl ?? '/billing', 303);
    });
  });
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const REASON_LABELS: Record<SandboxDeclineReason, string> = {
  insufficient_funds: 'Недостаточно средств / Insufficient funds',
  '3d_secure_failed': 'Не пройдена 3-D Secure / 3-D Secure failed',
  card_expired: 'Срок действия карты истёк / Card expired',
  payment_method_restricted: 'Операции по карте ограничены / Card restricted',
  canceled_by_merchant: 'Отменён магазином / Canceled by the shop',
};

function checkoutPage(row: { id: string; status: string; amount: string; description: string }): string {
  const decided = row.status !== 'pending';
  const statusText =
    row.status === 'succeeded'
      ? 'Оплачено / Paid'
      : row.status === 'canceled'
        ? 'Отклонено / Declined'
        : 'Ожидает оплаты / Awaiting payment';
  const reasons = SANDBOX_DECLINE_REASONS.map(
    (r) => `<option value="${r}">${escapeHtml(REASON_LABELS[r])}</option>`,
  ).join('');
  const action = escapeHtml(pathOf(sandboxDecisionEndpoint, { id: row.id }));
  return `<!doctype html>
<html lang="ru">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>ТЕСТ · Тестовая оплата / TEST checkout</title>
<style>
  body { margin: 0; font-family: system-ui, sans-serif; background: #f4f4f5; color: #18181b; }
  .banner { background: #f59e0b; color: #1c1917; text-align: center; padding: 10px 16px; font-weight: 700; letter-spacing: .02em; }
  main { max-width: 440px; margin: 32px auto; padding: 0 16px; }
  .card { background: #fff; border: 1px solid #e4e4e7; border-radius: 14px; padding: 24px; box-shadow: 0 1px 3px rgba(0,0,0,.06); }
  h1 { font-size: 20px; margin: 0 0 4px; }
  .muted { color: #71717a; font-size: 14px; margin: 0 0 20px; }
  .amount { font-size: 34px; font-weight: 700; margin: 8px 0; }
  .desc { font-size: 15px; margin: 0 0 4px; }
  .status { display: inline-block; font-size: 13px; padding: 3px 10px; border-radius: 999px; background: #f4f4f5; margin: 8px 0 20px; }
  button { width: 100%; border: 0; border-radius: 10px; padding: 13px; font-size: 16px; font-weight: 600; cursor: pointer; }
  .pay { background: #16a34a; color: #fff; margin-bottom: 16px; }
  .decline { background: #fff; color: #b91c1c; border: 1px solid #fca5a5; }
  label { display: block; font-size: 13px; color: #52525b; margin: 4px 0 6px; }
  select { width: 100%; padding: 9px; border-radius: 8px; border: 1px solid #d4d4d8; margin-bottom: 10px; font-size: 14px; background: #fff; }
  hr { border: 0; border-top: 1px solid #e4e4e7; margin: 8px 0 16px; }
  .note { font-size: 12px; color: #71717a; margin-top: 16px; }
</style>
</head>
<body>
<div class="banner">ТЕСТОВЫЙ РЕЖИМ — деньги не списываются · TEST MODE — no money is charged</div>
<main>
  <div class="card">
    <h1>Тестовая оплата · Test checkout</h1>
    <p class="muted">Песочница вместо ЮKassa · A sandbox standing in for YooKassa</p>
    <p class="desc">${escapeHtml(row.description)}</p>
    <p class="amount">${escapeHtml(row.amount)}&nbsp;₽</p>
    <span class="status" data-status="${escapeHtml(row.status)}">${statusText}</span>
    ${
      decided
        ? `<form method="post" action="${action}"><input type="hidden" name="action" value="pay"><button class="pay" type="submit">Вернуться в магазин · Back to the shop</button></form>`
        : `<form method="post" action="${action}">
      <input type="hidden" name="action" value="pay">
      <button class="pay" type="submit">Оплатить ${escapeHtml(row.amount)} ₽ · Pay</button>
    </form>
    <hr>
    <form method="post" action="${action}">
      <input type="hidden" name="action" value="decline">
      <label for="reason">Причина отказа · Decline reason</label>
      <select id="reason" name="reason">${reasons}</select>
      <button class="decline" type="submit">Отклонить · Decline</button>
    </form>`
    }
    <p class="note">Это тестовая страница: карта не нужна. · This is a test page: no card is needed.</p>
  </div>
</main>
</body>
</html>`;
}
