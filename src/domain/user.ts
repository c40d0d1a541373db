import { z } from 'zod';

/* SPEC section 3 "User", as the API sends it (GET /auth/me). */

export const subscriptionTypes = ['starter', 'pro', 'premium', 'payg'] as const;
export const subscriptionStatuses = ['active', 'cancelled', 'past_due', 'trial'] as const;

/** The user as GET /auth/me sends it; only SPEC's fields are kept. */
export const userRecordSchema = z.object({
  id: z.number().int(),
  avatar: z.string().nullable(),
  name: z.string().nullable(),
  email: z.string(),
  createdAt: z.string(),
  isActive: z.boolean(),
  tokensAmount: z.number().int().nonnegative(),
  subscriptionType: z.enum(subscriptionTypes),
  subscriptionStatus: z.enum(subscriptionStatuses),
  subscriptionTokensTotal: z.number().int(),
  subscriptionTokensUsed: z.number().int(),
  nextBillingDate: z.string().nullable(),
  trialEndsAt: z.string().nullable(),
});

export type User = z.output<typeof userRecordSchema>;

export type ParseResult<T> = { success: true; data: T } | { success: false };

/** The user if every field has its type; only SPEC's fields are kept. */
export function parseUser(value: unknown): ParseResult<User> {
  const parsed = userRecordSchema.safeParse(value);
  return parsed.success ? { success: true, data: parsed.data } : { success: false };
}

/** The shape request() takes (src/api/client.ts), as a zod schema has it. */
export const userSchema = { safeParse: parseUser };

/** The letter shown in the header when a user has no avatar. */
export function avatarLetter(user: Pick<User, 'email' | 'name'>): string {
  return (user.email.trim()[0] ?? user.name?.trim()[0] ?? '?').toUpperCase();
}
