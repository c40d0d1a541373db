import { describe, expect, it } from 'vitest';
import {
  avatarLetter,
  parseUser,
  subscriptionStatuses,
  subscriptionTypes,
  userSchema,
  type User,
} from '../../src/domain/user';

/** SPEC section 3 "User": every field, with a value of its type. */
const user: User = {
  id: 7,
  avatar: 'https://example.com/avatar.png',
  name: 'Anna',
  email: 'anna@example.com',
  createdAt: '2026-01-02T03:04:05.000Z',
  isActive: true,
  tokensAmount: 120,
  subscriptionType: 'pro',
  subscriptionStatus: 'active',
  subscriptionTokensTotal: 1000,
  subscriptionTokensUsed: 250,
  nextBillingDate: '2026-02-02T03:04:05.000Z',
  trialEndsAt: '2026-01-09T03:04:05.000Z',
};

const fields = Object.keys(user) as Array<keyof User>;

/** For each field, a value of another type than the field's. */
const wrongTypes: Record<keyof User, unknown[]> = {
  id: ['7', true, null, {}],
  avatar: [1, false, {}, []],
  name: [1, true, {}, ['Anna']],
  email: [1, null, true, {}],
  createdAt: [0, null, new Date(0).getTime(), {}],
  isActive: ['true', 1, 0, null],
  tokensAmount: ['120', null, true, []],
  subscriptionType: [1, null, true, ['pro']],
  subscriptionStatus: [1, null, false, ['active']],
  subscriptionTokensTotal: ['1000', null, true, {}],
  subscriptionTokensUsed: ['250', null, false, {}],
  nextBillingDate: [0, false, {}, []],
  trialEndsAt: [0, true, {}, []],
};

const numberFields = [
  'id',
  'tokensAmount',
  'subscriptionTokensTotal',
  'subscriptionTokensUsed',
] as const satisfies ReadonlyArray<keyof User>;

function without(field: keyof User): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...user };
  delete copy[field];
  return copy;
}

describe('parseUser', () => {
  it('accepts a complete user and gives it back as it came', () => {
    const result = parseUser({ ...user });
    expect(result).toEqual({ success: true, data: user });
    expect(Object.keys(result.success ? result.data : {}).sort()).toEqual([...fields].sort());
  });

  it('is what userSchema.safeParse does', () => {
    expect(userSchema.safeParse({ ...user })).toEqual({ success: true, data: user });
    expect(userSchema.safeParse(without('email'))).toEqual({ success: false });
  });

  it('keeps only the SPEC fields', () => {
    const result = parseUser({ ...user, password: 'secret', googleId: 'g-123', passwordHash: '$argon2id$...' });
    expect(result.success).toBe(true);
    if (!result.success) return;
    expect(result.data).toEqual(user);
    expect(result.data).not.toHaveProperty('password');
    expect(result.data).not.toHaveProperty('googleId');
    expect(result.data).not.toHaveProperty('passwordHash');
  });

  it('has one wrong-type list for every field of the user', () => {
    expect(Object.keys(wrongTypes).sort()).toEqual([...fields].sort());
    expect(fields).toHaveLength(13);
  });

  it.each(fields)('refuses a user without %s', (field) => {
    expect(parseUser(without(field))).toEqual({ success: false });
    expect(parseUser({ ...user, [field]: undefined })).toEqual({ success: false });
  });

  it.each(fields)('refuses a user whose %s has another type', (field) => {
    for (const value of wrongTypes[field]) {
      expect(parseUser({ ...user, [field]: value }), `${field}: ${JSON.stringify(value)}`).toEqual({
        success: false,
      });
    }
  });

  it.each(numberFields)('refuses a %s that is not a whole number', (field) => {
    for (const value of [1.5, NaN, Infinity, -Infinity, Number.MAX_SAFE_INTEGER + 1]) {
      expect(parseUser({ ...user, [field]: value }), `${field}: ${value}`).toEqual({ success: false });
    }
    expect(parseUser({ ...user, [field]: 0 }).success, `${field}: 0`).toBe(true);
  });

  it('refuses a fractional id', () => {
    expect(parseUser({ ...user, id: 1.5 })).toEqual({ success: false });
    expect(parseUser({ ...user, id: 2 }).success).toBe(true);
  });

  it('refuses a negative or fractional token balance, and accepts zero', () => {
    expect(parseUser({ ...user, tokensAmount: -1 })).toEqual({ success: false });
    expect(parseUser({ ...user, tokensAmount: 0.5 })).toEqual({ success: false });
    expect(parseUser({ ...user, tokensAmount: 10.25 })).toEqual({ success: false });
    expect(parseUser({ ...user, tokensAmount: 0 })).toEqual({ success: true, data: { ...user, tokensAmount: 0 } });
  });

  it('accepts every subscription type and status, and nothing else', () => {
    for (const subscriptionType of subscriptionTypes) {
      expect(parseUser({ ...user, subscriptionType }), subscriptionType).toEqual({
        success: true,
        data: { ...user, subscriptionType },
      });
    }
    for (const subscriptionStatus of subscriptionStatuses) {
      expect(parseUser({ ...user, subscriptionStatus }), subscriptionStatus).toEqual({
        success: true,
        data: { ...user, subscriptionStatus },
      });
    }
    for (const subscriptionType of ['free', 'Pro', 'PRO', '', 'enterprise', 'active']) {
      expect(parseUser({ ...user, subscriptionType }), subscriptionType).toEqual({ success: false });
    }
    for (const subscriptionStatus of ['expired', 'Active', '', 'pro']) {
      expect(parseUser({ ...user, subscriptionStatus }), subscriptionStatus).toEqual({ success: false });
    }
  });

  it.each(['avatar', 'name', 'nextBillingDate', 'trialEndsAt'] as const)('accepts a null %s', (field) => {
    expect(parseUser({ ...user, [field]: null })).toEqual({ success: true, data: { ...user, [field]: null } });
  });

  it('refuses a null email or createdAt', () => {
    expect(parseUser({ ...user, email: null })).toEqual({ success: false });
    expect(parseUser({ ...user, createdAt: null })).toEqual({ success: false });
  });

  it('refuses what is not an object', () => {
    for (const value of [null, undefined, [], [user], 'user', JSON.stringify(user), 7, true]) {
      expect(parseUser(value), JSON.stringify(value)).toEqual({ success: false });
    }
    // An array is refused even when it carries every field.
    expect(parseUser(Object.assign([], user))).toEqual({ success: false });
  });
});

describe('avatarLetter', () => {
  it('is the first letter of the email, upper-cased', () => {
    expect(avatarLetter({ email: 'anna@example.com', name: 'Boris' })).toBe('A');
    expect(avatarLetter({ email: 'élise@example.com', name: null })).toBe('É');
    expect(avatarLetter({ email: '  zoe@example.com ', name: null })).toBe('Z');
  });

  it('falls back to the name, then to a question mark', () => {
    expect(avatarLetter({ email: '', name: 'boris' })).toBe('B');
    expect(avatarLetter({ email: '   ', name: '  vera' })).toBe('V');
    expect(avatarLetter({ email: '', name: null })).toBe('?');
    expect(avatarLetter({ email: ' ', name: '  ' })).toBe('?');
  });
});
