import type { LedgerEntry, LedgerKind } from '../../src/domain/billing';
import { PORTRAIT_MODEL } from '../../src/domain/portraits';
import type { LedgerListRow } from './repository';

/**
 * A ledger row for GET /api/ledger: what it was for as a code (`kind`) and the values the
 * screen words it with (`params`: model ids, token counts, plan ids). The words themselves,
 * in the reader's language, and the models' display names are the browser's
 * (src/ui/billing/texts.ts): no sentence is built here.
 */
export function toLedgerEntry(row: LedgerListRow): LedgerEntry {
  return {
    id: Number(row.id),
    createdAt: row.createdAt.toISOString(),
    delta: row.delta,
    balanceAfter: row.balanceAfter,
    ...reasonOf(row),
  };
}

function reasonOf(row: LedgerListRow): Pick<LedgerEntry, 'kind' | 'params'> {
  const tokens = Math.abs(row.delta);
  const model = row.generationModel ?? undefined;
  const paymentId = row.paymentId ?? undefined;
  const plan = row.paymentPackage ?? undefined;
  switch (row.reason) {
    case 'signup_bonus':
      return { kind: 'signup', params: { tokens } };
    case 'generation_charge':
      // A portrait's generation request carries the portrait model id (server/portraits).
      return model === PORTRAIT_MODEL ? { kind: 'portrait', params: {} } : { kind: 'image', params: { model } };
    case 'generation_refund':
      return { kind: 'refund', params: { model } };
    case 'chat_reserve':
    case 'chat_release': {
      const used =
        row.chatInputTokens !== null && row.chatOutputTokens !== null
          ? row.chatInputTokens + row.chatOutputTokens
          : undefined;
      const kind: LedgerKind = row.reason === 'chat_reserve' ? 'chat' : 'chat_release';
      return { kind, params: { model: row.chatModel ?? undefined, tokens: used } };
    }
    case 'purchase':
      return { kind: 'purchase', params: { tokens, paymentId } };
    case 'subscription_grant':
      return { kind: 'subscription_grant', params: { tokens, plan, paymentId } };
    case 'payment_refund':
      return { kind: 'payment_refund', params: { tokens, plan, paymentId } };
    case 'subscription_expiry':
      return { kind: 'subscription_expiry', params: { tokens, plan } };
    case 'admin_grant':
    case 'admin_take':
      return { kind: 'admin', params: {} };
    default:
      return { kind: 'other', params: {} };
  }
}
