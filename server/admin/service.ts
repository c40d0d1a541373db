import { randomUUID } from 'node:crypto';
import type { Db } from '../db/client';
import { AppError } from '../errors';
import type { LedgerService } from '../ledger/service';
import * as repo from './repository';

/**
 * Operator tools (`npm run admin -- <command>`): every balance change goes through the
 * ledger like any other, with the operator's reason as the row's reference.
 */
export class AdminService {
  constructor(
    private readonly db: Db,
    private readonly ledger: LedgerService,
  ) {}

  async user(idOrEmail: string): Promise<repo.UserSummary> {
    const user = await repo.findUser(this.db, idOrEmail);
    if (!user) throw new AppError('NOT_FOUND', `No user ${idOrEmail}`);
    return user;
  }

  async grant(
    idOrEmail: string,
    amount: number,
    reason: string,
  ): Promise<{ user: repo.UserSummary; balanceAfter: number }> {
    const { user, note } = await this.prepare(idOrEmail, amount, reason);
    const result = await this.ledger.credit({
      userId: user.id,
      amount,
      reason: 'admin_grant',
      reference: note,
      idempotencyKey: `admin:${randomUUID()}`,
    });
    return { user, balanceAfter: result.balanceAfter };
  }

  async take(
    idOrEmail: string,
    amount: number,
    reason: string,
  ): Promise<{ user: repo.UserSummary; balanceAfter: number }> {
    const { user, note } = await this.prepare(idOrEmail, amount, reason);
    const result = await this.ledger.charge(
      { userId: user.id, amount, reason: 'admin_take', reference: note, idempotencyKey: `admin:${randomUUID()}` },
      (balance) => `Cannot take ${amount} tokens: the balance is ${balance}`,
    );
    return { user, balanceAfter: result.balanceAfter };
  }

  async ledgerOf(idOrEmail: string) {
    const user = await this.user(idOrEmail);
    return { user, entries: await repo.ledgerOf(this.db, user.id) };
  }

  async verify() {
    return repo.invariantViolations(this.db);
  }

  /** Refunded payments whose tokens were already spent: what could not be taken back. */
  async unrecoveredRefunds() {
    return repo.unrecoveredRefunds(this.db);
  }

  async disable(idOrEmail: string) {
    const user = await this.user(idOrEmail);
    return { user, ...(await this.db.transaction((tx) => repo.disableUser(tx, user.id))) };
  }

  async enable(idOrEmail: string) {
    const user = await this.user(idOrEmail);
    return { user, changed: await repo.enableUser(this.db, user.id) };
  }

  private async prepare(idOrEmail: string, amount: number, reason: string) {
    if (!Number.isInteger(amount) || amount <= 0) {
      throw new AppError('VALIDATION_ERROR', 'The amount must be a whole number of tokens above 0');
    }
    const note = reason.trim();
    if (note === '') throw new AppError('VALIDATION_ERROR', 'A reason is required (--reason "...")');
    if (note.length > 500) throw new AppError('VALIDATION_ERROR', 'The reason must be at most 500 characters');
    return { user: await this.user(idOrEmail), note: `admin: ${note}` };
  }
}
