import { z } from 'zod';

export const subscriptionTypes = ['starter', 'pro', 'premium', 'payg'] as const;
export const subscriptionStatuses = ['active', 'cancelled', 'past_due', 'trial'] as const;

/** SPEC section 3 "User", as the API sends it. */
export const userSchema = z.object({
  id: z.number().int(),
  avatar: z.string().nullable(),
  name: z.string().nullable(),
  email: z.string(),
  createdAt: z.string(),
  isActive: z.boolean(),
  tokensAmount: z.number().int().min(0),
  subscriptionType: z.enum(subscriptionTypes),
  subscriptionStatus: z.enum(subscriptionStatuses),
  subscriptionTokensTotal: z.number().int(),
  subscriptionTokensUsed: z.number().int(),
  nextBillingDate: z.string().nullable(),
  trialEndsAt: z.string().nullable(),
});

export type User = z.infer<typeof userSchema>;

/** The letter shown in the header when a user has no avatar. */
export function avatarLetter(user: Pick<User, 'email' | 'name'>): string {
  return (user.email.trim()[0] ?? user.name?.trim()[0] ?? '?').toUpperCase();
}
