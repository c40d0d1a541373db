import path from 'node:path';
import { z } from 'zod';

/**
 * The environment, parsed once at boot. Nothing else reads process.env: the parsed
 * Config is passed to whoever needs it. Defaults give the embedded, account-free set-up.
 */
const optionalString = z
  .string()
  .trim()
  .transform((v) => (v === '' ? undefined : v))
  .optional();

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
    OPENAI_MODELS: optionalString,
    OPENAI_TIMEOUT_MS: z.coerce.number().int().min(1000).default(60_000),
    OPENAI_MAX_RETRIES: z.coerce.number().int().min(0).max(5).default(2),
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
