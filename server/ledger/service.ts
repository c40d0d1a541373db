import type { Db, Executor } from '../db/client';
import { AppError } from '../errors';
import * as repo from './repository';

export type LedgerReason =
  | 'signup_bonus'
  | 'generation_charge'
  | 'generation_refund'
  | 'chat_reserve'
  | 'chat_release'
  | 'purchase'
  | 'subscription_grant'
  | 'subscription_expiry'
  /** Tokens a payment refunded at the provider (the shop's dashboard) had paid for, taken back. */
  | 'payment_refund'
  /** An operator's grant or take (`npm run admin`); the reference carries the reason. */
  | 'admin_grant'
  | 'admin_take';

export interface LedgerChange {
  userId: number;
  amount: number;
  reason: LedgerReason;
  reference?: string;
  /** Unique per intended change: a repeat with the same key changes nothing. */
  idempotencyKey: string;
}

export interface LedgerResult {
  balanceAfter: number;
  /** False when the key had been applied before and this call changed nothing. */
  applied: boolean;
}

/**
 * Balance changes: each is a conditional UPDATE and its ledger row in one statement
 * (repository.ts), so the ledger always sums to the balance and a balance never drops
 * below zero, whatever runs at the same time. Features that write their own rows with a
 * change (a chat reservation, a generation's charge) build one statement from the same
 * SQL pieces, `balanceUpdateSql` and `ledgerRowSql`.
 */
export class LedgerService {
  constructor(private readonly db: Db) {}

  /** Runs `work` in a transaction; the ledger methods accept that transaction. */
  transaction<T>(work: (tx: Executor) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /**
   * Takes `amount` tokens, or throws INSUFFICIENT_TOKENS with SPEC's message built by
   * `insufficientMessage(balance)`.
   */
  async charge(
    change: LedgerChange,
    insufficientMessage: (balance: number) => string,
    tx?: Executor,
  ): Promise<LedgerResult> {
    assertAmount(change.amount);
    const run = async (db: Executor): Promise<LedgerResult> => {
      const outcome = await repo.applyChange(db, entryOf(change, -change.amount));
      if (outcome.kind === 'applied') return { balanceAfter: outcome.balanceAfter, applied: true };
      const previous = await repo.findEntryByKey(db, change.idempotencyKey);
      if (previous) return { balanceAfter: previous.balanceAfter, applied: false };
      const balance = await repo.balanceOf(db, change.userId);
      if (balance === undefined) throw new AppError('UNAUTHORIZED');
      throw new AppError('INSUFFICIENT_TOKENS', insufficientMessage(balance), {
        details: { balance, cost: change.amount },
      });
    };
    return tx ? run(tx) : this.db.transaction(run);
  }

  /** Gives tokens back or adds bought ones; idempotent by key. */
  async credit(change: LedgerChange, tx?: Executor): Promise<LedgerResult> {
    assertAmount(change.amount);
    const run = async (db: Executor): Promise<LedgerResult> => {
      const outcome = await repo.applyChange(db, entryOf(change, change.amount));
      if (outcome.kind === 'applied') return { balanceAfter: outcome.balanceAfter, applied: true };
      const previous = await repo.findEntryByKey(db, change.idempotencyKey);
      if (previous) return { balanceAfter: previous.balanceAfter, applied: false };
      throw new AppError('NOT_FOUND');
    };
    return tx ? run(tx) : this.db.transaction(run);
  }

  async balance(userId: number): Promise<number> {
    return (await repo.balanceOf(this.db, userId)) ?? 0;
  }
}

function entryOf(change: LedgerChange, delta: number): repo.LedgerEntryInput {
  return {
    userId: change.userId,
    delta,
    reason: change.reason,
    reference: change.reference ?? null,
    idempotencyKey: change.idempotencyKey,
  };
}

function assertAmount(amount: number): void {
  if (!Number.isInteger(amount) || amount <= 0) {
    throw new Error(`ledger amounts are positive integers, got ${amount}`);
  }
}
