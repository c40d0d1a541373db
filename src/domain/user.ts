/*
 * SPEC section 3 "User", as the API sends it. Parsed by hand rather than with a schema:
 * the session check runs on every page's first load, before any screen, and this keeps
 * the schema library out of that path.
 */

export const subscriptionTypes = ['starter', 'pro', 'premium', 'payg'] as const;
export const subscriptionStatuses = ['active', 'cancelled', 'past_due', 'trial'] as const;

export interface User {
  id: number;
  avatar: string | null;
  name: string | null;
  email: string;
  createdAt: string;
  isActive: boolean;
  tokensAmount: number;
  subscriptionType: (typeof subscriptionTypes)[number];
  subscriptionStatus: (typeof subscriptionStatuses)[number];
  subscriptionTokensTotal: number;
  subscriptionTokensUsed: number;
  nextBillingDate: string | null;
  trialEndsAt: string | null;
}

export type ParseResult<T> = { success: true; data: T } | { success: false };

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isText = (value: unknown): value is string => typeof value === 'string';
const isTextOrNull = (value: unknown): value is string | null => value === null || typeof value === 'string';
const isWhole = (value: unknown): value is number => Number.isSafeInteger(value);
const isOneOf =
  <T extends string>(options: readonly T[]) =>
  (value: unknown): value is T =>
    options.includes(value as T);

const userFields: { [K in keyof User]: (value: unknown) => boolean } = {
  id: isWhole,
  avatar: isTextOrNull,
  name: isTextOrNull,
  email: isText,
  createdAt: isText,
  isActive: (value) => typeof value === 'boolean',
  tokensAmount: (value) => isWhole(value) && value >= 0,
  subscriptionType: isOneOf(subscriptionTypes),
  subscriptionStatus: isOneOf(subscriptionStatuses),
  subscriptionTokensTotal: isWhole,
  subscriptionTokensUsed: isWhole,
  nextBillingDate: isTextOrNull,
  trialEndsAt: isTextOrNull,
};

/** The user if every field has its type; only SPEC's fields are kept. */
export function parseUser(value: unknown): ParseResult<User> {
  if (!isObject(value)) return { success: false };
  const user: Record<string, unknown> = {};
  for (const [field, valid] of Object.entries(userFields)) {
    if (!valid(value[field])) return { success: false };
    user[field] = value[field];
  }
  return { success: true, data: user as unknown as User };
}

/** The shape request() takes (src/api/client.ts), as a zod schema has it. */
export const userSchema = { safeParse: parseUser };

/** The letter shown in the header when a user has no avatar. */
export function avatarLetter(user: Pick<User, 'email' | 'name'>): string {
  return (user.email.trim()[0] ?? user.name?.trim()[0] ?? '?').toUpperCase();
}
