import type { ModelList } from '../../src/domain/conversation';
import type { Config, ConfiguredChatModel } from '../config';
import { createOfflineChatEngine, OFFLINE_CHAT_MODEL_ID } from '../providers/chat/offline';
import { createOpenAiChatEngine } from '../providers/chat/openai';
import type { ChatEngine } from '../providers/chat/types';

/**
 * Which models are offered and which engine answers them. Prices are app tokens per 1M
 * model tokens. Defaults for OpenAI follow PROVIDERS.md's list prices ($2.50/$10 and
 * $0.15/$0.60 per 1M) at roughly 90 RUB per dollar and 0.7 RUB per app token.
 */
export const DEFAULT_OPENAI_MODELS: ConfiguredChatModel[] = [
  {
    id: 'gpt-4o',
    name: 'GPT-4o',
    description: "OpenAI's flagship model: strong reasoning, writing and code.",
    maxTokens: 128000,
    inputCostPer1M: 350,
    outputCostPer1M: 1400,
    isStreamingAllowed: true,
  },
  {
    id: 'gpt-4o-mini',
    name: 'GPT-4o Mini',
    description: 'Fast and inexpensive; good for everyday questions.',
    maxTokens: 128000,
    inputCostPer1M: 25,
    outputCostPer1M: 100,
    isStreamingAllowed: true,
  },
];

/** The offline assistant costs little but not nothing, so billing runs for real. */
export const OFFLINE_MODEL: ConfiguredChatModel = {
  id: OFFLINE_CHAT_MODEL_ID,
  name: 'Offline assistant',
  description: 'Scripted replies that run without any account: shows streaming and billing.',
  maxTokens: 128000,
  inputCostPer1M: 1000,
  outputCostPer1M: 2000,
  isStreamingAllowed: true,
};

export interface ChatSetup {
  engine: ChatEngine;
  models: ConfiguredChatModel[];
}

export function chatSetupFor(config: Config): ChatSetup {
  if (config.OPENAI_API_KEY) {
    return {
      engine: createOpenAiChatEngine({
        apiKey: config.OPENAI_API_KEY,
        baseURL: config.OPENAI_BASE_URL ?? 'https://api.openai.com/v1',
        timeoutMs: config.OPENAI_TIMEOUT_MS,
        maxRetries: config.OPENAI_MAX_RETRIES,
      }),
      models: config.OPENAI_MODELS ?? DEFAULT_OPENAI_MODELS,
    };
  }
  return {
    engine: createOfflineChatEngine({ tokenDelayMs: config.CHAT_OFFLINE_TOKEN_DELAY_MS }),
    // OPENAI_MODELS describes the remote service's models; offline there is only one.
    models: [OFFLINE_MODEL],
  };
}

export function modelListOf(models: readonly ConfiguredChatModel[]): ModelList {
  const first = models[0];
  if (!first) throw new Error('no chat models configured');
  // How the limit is sent upstream is the server's business, not the browser's.
  const listed = models.map(({ maxTokensParam: _param, ...model }) => model);
  return { models: Object.fromEntries(listed.map((m) => [m.id, m])), default: first.id };
}
