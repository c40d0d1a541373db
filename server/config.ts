import { DEFAULT_JOBS_PER_USER } from '../src/domain/jobs';
import { isIP } from 'node:net';
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
  // How the reply limit is sent: OpenAI's o-series and GPT-5 refuse max_tokens. Left out,
  // it follows the model id (server/providers/chat/openai.ts maxTokensParamFor).
  maxTokensParam: z
    .enum(['max_tokens', 'max_completion_tokens'], {
      error: 'maxTokensParam must be "max_tokens" or "max_completion_tokens"',
    })
    .optional(),
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

/**
 * TRUST_PROXY: which hops in front of the app may tell it the client's address
 * (X-Forwarded-For) and scheme. Off by default. A number is how many proxies stand in
 * front (1 for one load balancer): the address is the one that many hops back from the
 * connection, so whatever the client itself wrote further left is ignored. A
 * comma-separated list of addresses and CIDR ranges trusts exactly those balancers.
 * `true` (trust every hop) is refused: with it the leftmost address, which the client
 * writes itself, would decide its rate limit and pass the payment webhook's sender check.
 */
const trustProxySchema = z
  .string()
  .trim()
  .default('false')
  .transform((value, ctx): false | number | string[] => {
    const v = value.toLowerCase();
    if (v === '' || v === 'false' || v === '0') return false;
    if (v === 'true') {
      ctx.addIssue({
        code: 'custom',
        message:
          'TRUST_PROXY=true would trust every hop, so a client could choose its own address with X-Forwarded-For; ' +
          'set the number of proxies in front of the app (e.g. 1) or their addresses (e.g. 10.0.0.0/8)',
      });
      return z.NEVER;
    }
    if (/^\d+$/.test(v)) return Number(v);
    const items = value
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean);
    const bad = items.filter((item) => !isAddressOrRange(item));
    if (bad.length > 0 || items.length === 0) {
      ctx.addIssue({
        code: 'custom',
        message: `TRUST_PROXY must be false, a number of proxies, or addresses and CIDR ranges (not: ${bad.join(', ') || value})`,
      });
      return z.NEVER;
    }
    return items;
  });

function isAddressOrRange(item: string): boolean {
  const [address = '', prefix, ...rest] = item.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  if (!/^\d+$/.test(prefix)) return false;
  return Number(prefix) <= (family === 4 ? 32 : 128);
}

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
    TRUST_PROXY: trustProxySchema,
    // A request's headers must arrive within HEADERS_TIMEOUT_MS and the whole request
    // (headers and body) within REQUEST_TIMEOUT_MS, or it is answered 408 and its
    // connection closed: a client trickling bytes holds a connection for a bounded time.
    HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).default(20_000),
    REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).default(120_000),
    GOOGLE_CLIENT_ID: optionalString,
    GOOGLE_CLIENT_SECRET: optionalString,
    GOOGLE_ISSUER: z.url().default('https://accounts.google.com'),
    STARTER_TOKENS: z.coerce.number().int().min(0).default(50),
    STABILITY_API_KEY: optionalString,
    STABILITY_BASE_URL: z.url().default('https://api.stability.ai'),
    STABILITY_TIMEOUT_MS: z.coerce.number().int().min(1000).default(120_000),
    // How often PENDING generations left by a crash are looked for (0 turns it off). Which
    // ones are abandoned is decided by their heartbeat (server/background/liveness.ts), not here.
    GENERATION_RECONCILE_INTERVAL_MS: z.coerce.number().int().min(0).default(60_000),
    // Durable jobs (server/jobs/queue.ts, docs/configuration.md): jobs one user may have
    // queued or running at once; jobs running at once at each provider over all instances
    // (keeps us under the provider's rate limit); jobs one instance runs at once; how often
    // the line is looked at without a poke; how long a job may wait in line before refunded.
    // The name this instance claims jobs under (generation_requests.claimed_by); a random one by default.
    INSTANCE_ID: optionalString.pipe(z.string().max(100).optional()),
    JOBS_PER_USER: z.coerce.number().int().min(1).max(100).default(DEFAULT_JOBS_PER_USER),
    JOBS_SLOTS_IMAGES: z.coerce.number().int().min(1).max(1000).default(10),
    JOBS_SLOTS_PORTRAITS: z.coerce.number().int().min(1).max(1000).default(5),
    JOBS_PER_INSTANCE: z.coerce.number().int().min(0).max(1000).default(32),
    JOBS_POLL_MS: z.coerce.number().int().min(50).default(2_000),
    JOBS_QUEUE_TIMEOUT_MS: z.coerce
      .number()
      .int()
      .min(1000)
      .default(30 * 60_000),
    // How often stored images without a row (a crash between write and record) are removed.
    IMAGE_SWEEP_INTERVAL_MS: z.coerce
      .number()
      .int()
      .min(0)
      .default(15 * 60_000),
    OPENAI_API_KEY: optionalString,
    OPENAI_BASE_URL: optionalString.pipe(z.url().optional()),
    OPENAI_MODELS: chatModelsJson,
    OPENAI_TIMEOUT_MS: z.coerce.number().int().min(1000).default(60_000),
    OPENAI_MAX_RETRIES: z.coerce.number().int().min(0).max(5).default(2),
    CHAT_HEARTBEAT_MS: z.coerce.number().int().min(10).default(15_000),
    CHAT_OFFLINE_TOKEN_DELAY_MS: z.coerce.number().int().min(0).default(25),
    CHAT_RECONCILE_INTERVAL_MS: z.coerce.number().int().min(0).default(60_000),
    RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(300),
    // Portraits: Replicate when a token is set, otherwise the offline engine.
    REPLICATE_API_TOKEN: optionalString,
    REPLICATE_BASE_URL: z.url().default('https://api.replicate.com'),
    REPLICATE_MODEL: z
      .string()
      .regex(/^[\w.-]+\/[\w.-]+(:[0-9a-f]+)?$/, 'REPLICATE_MODEL must be owner/name or owner/name:version')
      .default('black-forest-labs/flux-kontext-pro'),
    REPLICATE_INPUT_PROMPT: z.string().trim().default('prompt'),
    REPLICATE_INPUT_IMAGE: z
      .string()
      .trim()
      .min(1, 'REPLICATE_INPUT_IMAGE must name the photo input')
      .default('input_image'),
    REPLICATE_INPUT_ASPECT_RATIO: z.string().trim().default('aspect_ratio'),
    REPLICATE_INPUT_OUTPUT_FORMAT: z.string().trim().default('output_format'),
    REPLICATE_DELIVERY_HOSTS: z
      .string()
      .default('replicate.delivery,*.replicate.delivery')
      .transform((v) =>
        v
          .split(',')
          .map((h) => h.trim())
          .filter(Boolean),
      ),
    REPLICATE_TIMEOUT_MS: z.coerce.number().int().min(1000).default(120_000),
    REPLICATE_POLL_INTERVAL_MS: z.coerce.number().int().min(10).default(1000),
    // Payments: YooKassa when both credentials are set, otherwise the sandbox checkout.
    YOOKASSA_SHOP_ID: optionalString,
    YOOKASSA_SECRET_KEY: optionalString,
    YOOKASSA_API_URL: z.url().default('https://api.yookassa.ru/v3'),
    YOOKASSA_TIMEOUT_MS: z.coerce.number().int().min(100).default(15_000),
    YOOKASSA_RETRIES: z.coerce.number().int().min(0).max(10).default(3),
    // Comma-separated addresses and CIDR ranges notifications may come from.
    YOOKASSA_WEBHOOK_IPS: z
      .string()
      .default(
        '185.71.76.0/27,185.71.77.0/27,77.75.153.0/25,77.75.156.11,77.75.156.35,77.75.154.128/25,2a02:5180::/32',
      ),
    YOOKASSA_RECEIPTS: z
      .enum(['true', 'false', '1', '0'])
      .default('false')
      .transform((v) => v === 'true' || v === '1'),
    YOOKASSA_VAT_CODE: z.coerce.number().int().min(1).max(12).default(1),
    YOOKASSA_PAYMENT_SUBJECT: z.string().default('service'),
    YOOKASSA_PAYMENT_MODE: z.string().default('full_prepayment'),
    // Pending payments are re-read after PAYMENTS_RECHECK_AFTER_MS and closed as expired
    // after PAYMENTS_EXPIRE_AFTER_MS; the renewal job charges due subscriptions.
    PAYMENTS_RECONCILE_INTERVAL_MS: z.coerce.number().int().min(0).default(60_000),
    PAYMENTS_RECHECK_AFTER_MS: z.coerce
      .number()
      .int()
      .min(0)
      .default(3 * 60_000),
    PAYMENTS_EXPIRE_AFTER_MS: z.coerce
      .number()
      .int()
      .min(60_000)
      .default(2 * 60 * 60_000),
    SUBSCRIPTION_RENEWAL_INTERVAL_MS: z.coerce
      .number()
      .int()
      .min(0)
      .default(5 * 60_000),
    SUBSCRIPTION_RETRY_INTERVAL_MS: z.coerce
      .number()
      .int()
      .min(0)
      .default(24 * 60 * 60_000),
    SUBSCRIPTION_MAX_RETRIES: z.coerce.number().int().min(0).max(10).default(3),
    // Several instances: a shared rate limit, images in a bucket, metrics for a scraper.
    REDIS_URL: optionalString.pipe(
      z
        .url({ message: 'REDIS_URL must be a URL like redis://127.0.0.1:6379 or rediss://host:6380/0' })
        .refine((v) => /^rediss?:\/\//.test(v), 'REDIS_URL must start with redis:// or rediss://')
        .optional(),
    ),
    REDIS_KEY_PREFIX: z.string().default('imagegen:'),
    S3_BUCKET: optionalString.pipe(
      z
        .string()
        .regex(
          /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/,
          'S3_BUCKET must be a bucket name: 3-63 lowercase letters, digits, dots and hyphens',
        )
        .optional(),
    ),
    S3_ENDPOINT: optionalString.pipe(
      z
        .url({ message: 'S3_ENDPOINT must be an absolute URL like https://s3.example.com' })
        .refine((v) => /^https?:\/\//.test(v), 'S3_ENDPOINT must start with http:// or https://')
        .optional(),
    ),
    S3_REGION: optionalString.pipe(
      z
        .string()
        .regex(/^[a-z0-9-]+$/, 'S3_REGION must be a region name like us-east-1')
        .optional(),
    ),
    S3_ACCESS_KEY_ID: optionalString,
    S3_SECRET_ACCESS_KEY: optionalString,
    S3_FORCE_PATH_STYLE: z
      .enum(['true', 'false', '1', '0'], { message: 'S3_FORCE_PATH_STYLE must be true or false' })
      .default('false')
      .transform((v) => v === 'true' || v === '1'),
    S3_TIMEOUT_MS: z.coerce.number().int().min(100).default(15_000),
    IMAGE_OFFLINE_DELAY_MS: z.coerce.number().int().min(0).default(0),
    SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(10_000),
    METRICS_TOKEN: optionalString.pipe(z.string().min(16, 'METRICS_TOKEN must be at least 16 characters').optional()),
    // The OpenAPI description (/api/openapi.json) and its viewer (/api/docs): on outside
    // production unless API_DOCS=false, in production only with API_DOCS=true.
    API_DOCS: optionalString.pipe(
      z
        .enum(['true', 'false', '1', '0'], { message: 'API_DOCS must be true or false' })
        .optional()
        .transform((v) => (v === undefined ? undefined : v === 'true' || v === '1')),
    ),
  })
  .superRefine((env, ctx) => {
    if (env.HEADERS_TIMEOUT_MS > env.REQUEST_TIMEOUT_MS) {
      ctx.addIssue({
        code: 'custom',
        path: ['HEADERS_TIMEOUT_MS'],
        message: 'HEADERS_TIMEOUT_MS must not be longer than REQUEST_TIMEOUT_MS',
      });
    }
    if (Boolean(env.GOOGLE_CLIENT_ID) !== Boolean(env.GOOGLE_CLIENT_SECRET)) {
      ctx.addIssue({
        code: 'custom',
        path: ['GOOGLE_CLIENT_SECRET'],
        message: 'GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET must be set together',
      });
    }
    if (Boolean(env.YOOKASSA_SHOP_ID) !== Boolean(env.YOOKASSA_SECRET_KEY)) {
      ctx.addIssue({
        code: 'custom',
        path: ['YOOKASSA_SECRET_KEY'],
        message: 'YOOKASSA_SHOP_ID and YOOKASSA_SECRET_KEY must be set together',
      });
    }
    if (Boolean(env.S3_ACCESS_KEY_ID) !== Boolean(env.S3_SECRET_ACCESS_KEY)) {
      ctx.addIssue({
        code: 'custom',
        path: ['S3_SECRET_ACCESS_KEY'],
        message: 'S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY must be set together',
      });
    }
    if (!env.S3_BUCKET) {
      for (const name of ['S3_ENDPOINT', 'S3_REGION', 'S3_ACCESS_KEY_ID'] as const) {
        if (env[name]) ctx.addIssue({ code: 'custom', path: [name], message: `${name} is set but S3_BUCKET is not` });
      }
    } else if (!env.S3_REGION && !env.S3_ENDPOINT) {
      ctx.addIssue({
        code: 'custom',
        path: ['S3_REGION'],
        message: 'S3_REGION is required with S3_BUCKET (or S3_ENDPOINT for an S3-compatible store)',
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
  /** Whether /api/openapi.json and /api/docs are served (API_DOCS, else outside production). */
  apiDocs: boolean;
  /** The bucket's region; S3-compatible stores often ignore it. */
  S3_REGION: string;
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
    apiDocs: e.API_DOCS ?? e.NODE_ENV !== 'production',
    S3_REGION: e.S3_REGION ?? 'us-east-1',
    ...overrides,
  };
}
