import { createHash, randomBytes } from 'node:crypto';
import type { User } from '../../src/domain/user';
import type { Db } from '../db/client';
import { AppError } from '../errors';
import type { LedgerService } from '../ledger/service';
import { periodTokensUsed } from '../payments/repository';
import * as repo from './repository';
import type { IdentityClaims, UserRow } from './repository';

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

function toUserDto(row: UserRow): User {
  return {
    id: row.id,
    avatar: row.avatar,
    name: row.name,
    email: row.email,
    createdAt: row.createdAt.toISOString(),
    isActive: row.isActive,
    tokensAmount: row.tokensAmount,
    subscriptionType: row.subscriptionType as User['subscriptionType'],
    subscriptionStatus: row.subscriptionStatus as User['subscriptionStatus'],
    subscriptionTokensTotal: row.subscriptionTokensTotal,
    subscriptionTokensUsed: row.subscriptionTokensUsed,
    nextBillingDate: row.nextBillingDate?.toISOString() ?? null,
    trialEndsAt: row.trialEndsAt?.toISOString() ?? null,
  };
}

export class AuthService {
  private readonly findUserBySessionHash: ReturnType<typeof repo.prepareFindUserBySessionHash>;

  constructor(
    private readonly db: Db,
    private readonly ledger: LedgerService,
    private readonly options: { sessionTtlDays: number; starterTokens: number },
  ) {
    this.findUserBySessionHash = repo.prepareFindUserBySessionHash(db);
  }

  /**
   * The user as /auth/me sends it. A subscriber's tokens used this period are counted now: the
   * row keeps the figure of the subscription's last change, and spending changes it since.
   */
  async current(row: UserRow): Promise<User> {
    const user = toUserDto(row);
    if (row.subscriptionType !== 'pro' && row.subscriptionType !== 'premium') return user;
    const used = await periodTokensUsed(this.db, row.id);
    return used === undefined ? user : { ...user, subscriptionTokensUsed: used };
  }

  /**
   * Creates or refreshes the user, grants the starter tokens to a new one and opens a
   * session, all in one transaction: a failure leaves no half-created user behind.
   */
  async signIn(
    claims: IdentityClaims,
    userAgent: string | null,
  ): Promise<{ token: string; user: UserRow; expiresAt: Date }> {
    const token = randomBytes(32).toString('base64url');
    const expiresAt = new Date(Date.now() + this.options.sessionTtlDays * 86_400_000);
    const user = await this.db.transaction(async (tx) => {
      const { user: row, created } = await repo.upsertUser(tx, claims);
      // An operator disabled the account (`npm run admin -- disable`): no new session.
      if (!row.isActive) throw new AppError('ACCOUNT_DISABLED', undefined, { details: { userId: row.id } });
      let current = row;
      if (created && this.options.starterTokens > 0) {
        await this.ledger.credit(
          {
            userId: row.id,
            amount: this.options.starterTokens,
            reason: 'signup_bonus',
            idempotencyKey: `signup:${row.id}`,
          },
          tx,
        );
        current = (await repo.findUserById(tx, row.id)) ?? row;
      }
      await repo.insertSession(tx, { tokenHash: hashToken(token), userId: row.id, expiresAt, userAgent });
      return current;
    });
    return { token, user, expiresAt };
  }

  async userForToken(token: string): Promise<UserRow | undefined> {
    if (!/^[A-Za-z0-9_-]{20,100}$/.test(token)) return undefined;
    return this.findUserBySessionHash(hashToken(token), new Date());
  }

  async signOut(token: string): Promise<void> {
    await repo.deleteSessionByHash(this.db, hashToken(token));
  }

  async findUser(id: number): Promise<UserRow | undefined> {
    return repo.findUserById(this.db, id);
  }
}
