import path from 'node:path';
import { z } from 'zod';
import { chatModelSchema } from '../src/domain/chat';

/**
 * The environment, parsed once at boot. Nothing else reads process.env: the parsed
 * Config is passed to whoever needs it. Defaults give the embedded, account-free set-up.
 */
const optionalString = z
  .string()
  .trim()
  .transform((v) => (v === '' ? undefined : v))
  .optional();

/**
 * OPENAI_MODELS: a JSON list of the models offered, e.g.
 * `[{"id":"gpt-4o","name":"GPT-4o","inputCostPer1M":350,"outputCostPer1M":1400}]`.
 * Prices are app tokens per 1M model tokens and are required: every reply is billed.
 */
const configuredChatModelSchema = chatModelSchema.extend({
  inputCostPer1M: z.number({ error: 'inputCostPer1M (app tokens per 1M input tokens) is required' }).nonnegative(),
  outputCostPer1M: z.number({ error: 'outputCostPer1M (app tokens per 1M output tokens) is required' }).nonnegative(),
});
export type ConfiguredChatModel = z.output<typeof configuredChatModelSchema>;

const chatModelsSchema = z
  .array(configuredChatModelSchema)
  .min(1, 'OPENAI_MODELS must list at least one model')
  .refine((list) => new Set(list.map((m) => m.id)).size === list.length, 'OPENAI_MODELS: model ids must be unique');

const chatModelsJson = optionalString.transform((text, ctx): ConfiguredChatModel[] | undefined => {
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    ctx.addIssue({ code: 'custom', message: 'OPENAI_MODELS must be a JSON list of models' });
    return z.NEVER;
  }
  const parsed = chatModelsSchema.safeParse(value);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      ctx.addIssue({ code: 'custom', path: [...issue.path], message: issue.message });
    }
    return z.NEVER;
  }
  return parsed.data;
});

const envSchema = z
  .object({
    NODE_ENV: z.enum(['development', 'production', 'test']).default('production'),
    PORT: z.coerce.number().int().min(0).max(65535).default(3000),
    HOST: z.string().default('0.0.0.0'),
    APP_URL: z.url({ message: 'APP_URL must be an absolute URL like https://app.example.com' }).optional(),
    DATA_DIR: z.string().default('./data'),
    DATABASE_URL: optionalString,
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    COOKIE_SECRET: optionalString.pipe(z.string().min(32, 'COOKIE_SECRET must be at least 32 characters').optional()),
    SESSION_TTL_DAYS: z.coerce.number().int().min(1).max(365).default(30),
    TRUST_PROXY: z
      .enum(['true', 'false', '1', '0'])
      .default('false')
      .transform((v) => v === 'true' || v === '1'),
    GOOGLE_CLIENT_ID: optionalString,
    GOOGLE_CLIENT_SECRET: optionalString,
    GOOGLE_ISSUER: z.url().default('https://accounts.google.com'),
    STARTER_TOKENS: z.coerce.number().int().min(0).default(50),
    STABILITY_API_KEY: optionalString,
    STABILITY_BASE_URL: z.url().default('https://api.stability.ai'),
    STABILITY_TIMEOUT_MS: z.coerce.number().int().min(1000).default(120_000),
    // How often PENDING generations left by a crash are looked for (0 turns it off),
    // and how long past STABILITY_TIMEOUT_MS one must be before it is refunded.
    GENERATION_RECONCILE_INTERVAL_MS: z.coerce.number().int().min(0).default(60_000),
    GENERATION_RECONCILE_GRACE_MS: z.coerce.number().int().min(0).default(30_000),
    OPENAI_API_KEY: optionalString,
    OPENAI_BASE_URL: optionalString.pipe(z.url().optional()),
    OPENAI_MODELS: chatModelsJson,
    OPENAI_TIMEOUT_MS: z.coerce.number().int().min(1000).default(60_000),
    OPENAI_MAX_RETRIES: z.coerce.number().int().min(0).max(5).default(2),
    CHAT_HEARTBEAT_MS: z.coerce.number().int().min(10).default(15_000),
    CHAT_OFFLINE_TOKEN_DELAY_MS: z.coerce.number().int().min(0).default(25),
    CHAT_STALE_AFTER_MS: z.coerce
      .number()
      .int()
      .min(1000)
      .default(15 * 60_000),
    CHAT_RECONCILE_INTERVAL_MS: z.coerce.number().int().min(0).default(60_000),
    RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(300),
  })
  .superRefine((env, ctx) => {
    if (Boolean(env.GOOGLE_CLIENT_ID) !== Boolean(env.GOOGLE_CLIENT_SECRET)) {
      ctx.addIssue({
        code: 'custom',
        path: ['GOOGLE_CLIENT_SECRET'],
        message: 'GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET must be set together',
      });
    }
  });

export type Env = z.infer<typeof envSchema>;

export interface Config extends Env {
  /** The public origin of the app, without a trailing slash. */
  appUrl: string;
  dataDir: string;
  imagesDir: string;
  /** Where the built SPA lives; absent in API-only tests. */
  webDir?: string;
  isProduction: boolean;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export function parseConfig(
  env: Record<string, string | undefined> = process.env,
  overrides: Partial<Config> = {},
): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.') || 'env'}: ${issue.message}`));
  }
  const e = parsed.data;
  const dataDir = path.resolve(e.DATA_DIR);
  const appUrl = (e.APP_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, '');
  return {
    ...e,
    appUrl,
    dataDir,
    imagesDir: path.join(dataDir, 'images'),
    webDir: path.resolve('dist'),
    isProduction: e.NODE_ENV === 'production',
    ...overrides,
  };
}
