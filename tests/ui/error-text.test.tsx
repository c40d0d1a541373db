import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { errorText, messageText } from '../../src/api/error-text';
import { generateImage } from '../../src/api/images';
import { IMAGE_MODELS } from '../../src/domain/images';
import { problemOf } from '../../src/domain/errors';
import { initI18n } from '../../src/i18n';

const refusal = (cost: number, balance: number) => ({
  code: 'INSUFFICIENT_TOKENS',
  message: `Insufficient tokens. Need ${cost} tokens but only have ${balance}`,
  details: { cost, balance },
});

describe('errors are worded by their code, in the user language', () => {
  beforeAll(async () => {
    await initI18n('ru');
  });
  afterAll(async () => {
    await initI18n('ru');
  });

  it('Russian: the refusal with the server values and correct plural forms', () => {
    expect(errorText(refusal(1, 0))).toBe('Недостаточно токенов: нужен 1 токен, а у вас только 0');
    expect(errorText(refusal(2, 1))).toBe('Недостаточно токенов: нужно 2 токена, а у вас только 1');
    expect(errorText(refusal(16, 3))).toBe('Недостаточно токенов: нужно 16 токенов, а у вас только 3');
    expect(errorText(refusal(21, 0))).toBe('Недостаточно токенов: нужен 21 токен, а у вас только 0');
    // Without the values, the code still has its wording.
    expect(errorText({ code: 'INSUFFICIENT_TOKENS', message: 'Insufficient tokens' })).toBe('Недостаточно токенов');
  });

  // A page runs in one language (switching reloads it), so English is a page of its own.
  it("English: SPEC's text word for word", async () => {
    await initI18n('en');
    expect(errorText(refusal(1, 0))).toBe('Insufficient tokens. Need 1 tokens but only have 0');
    expect(errorText(refusal(16, 3))).toBe('Insufficient tokens. Need 16 tokens but only have 3');
    expect(errorText({ code: 'PROVIDER_ERROR', message: 'Ultra generation failed' }, 'generation')).toBe(
      'Ultra generation failed',
    );
    expect(errorText({ code: 'loadConversations', message: 'Failed to load conversations' }, 'chat')).toBe(
      'Failed to load conversations',
    );
    await initI18n('ru');
  });

  it("words SPEC's per-model failures, chat failures, validation rules and generic codes", () => {
    expect(errorText({ code: 'PROVIDER_ERROR', message: 'SD3 generation failed' }, 'generation')).toBe(
      'Не удалось создать изображение (SD3)',
    );
    expect(
      errorText(
        { code: 'VALIDATION_ERROR', message: 'Prompt is required', details: { rule: 'promptRequired' } },
        'generation',
      ),
    ).toBe('Введите промпт');
    // A server VALIDATION_ERROR carrying SPEC's text is worded too.
    expect(errorText({ code: 'VALIDATION_ERROR', message: 'Prompt is required' }, 'generation')).toBe('Введите промпт');
    expect(errorText({ code: 'CHAT_UPSTREAM', message: 'The language model service failed to answer.' }, 'chat')).toBe(
      'Сервис языковой модели не смог ответить. Попробуйте позже.',
    );
    expect(errorText({ code: 'sendMessage', message: 'Failed to send message' }, 'chat')).toBe(
      'Не удалось отправить сообщение',
    );
    expect(errorText({ code: 'NETWORK_ERROR', message: 'Network error occurred' })).toBe('Ошибка сети');
    expect(errorText({ code: 'UNKNOWN_MODEL', message: 'Unknown model: x', details: { model: 'x' } })).toBe(
      'Неизвестная модель: x',
    );
    expect(messageText('Please try again later')).toBe('Попробуйте позже');
  });

  it("shows the server's own words only where no code fits them", () => {
    // The provider said why it refused the prompt: that is the point of the message.
    expect(errorText({ code: 'PROVIDER_ERROR', message: 'Your prompt was flagged by moderation' }, 'generation')).toBe(
      'Your prompt was flagged by moderation',
    );
    // Another server's text with no code of ours.
    const foreign = problemOf(
      {
        code: 'INTERNAL',
        codeGuessed: true,
        status: 502,
        message: 'Bad gateway',
        body: { message: 'Upstream is down' },
      },
      { code: 'PROVIDER_ERROR', message: 'Generation failed' },
    );
    expect(errorText(foreign)).toBe('Upstream is down');
  });
});

describe('a generation that fails without a server message', () => {
  const realFetch = globalThis.fetch;
  afterAll(() => {
    globalThis.fetch = realFetch;
  });

  it.each(['original', 'ultra', 'core', 'sd3'] as const)(
    "reads as SPEC's text for %s, not 'Internal server error'",
    async (model) => {
      globalThis.fetch = vi.fn(async () => new Response('', { status: 500, statusText: 'Internal Server Error' }));
      const error = await generateImage(IMAGE_MODELS[model].endpoint, { prompt: 'x' }).catch((e: unknown) => e);
      const problem = problemOf(error, { code: 'PROVIDER_ERROR', message: 'Generation failed. Please try again.' });
      expect(problem).toMatchObject({ code: 'PROVIDER_ERROR', message: IMAGE_MODELS[model].failureMessage });
      await initI18n('en');
      expect(errorText(problem, 'generation')).toBe(IMAGE_MODELS[model].failureMessage);
      await initI18n('ru');
      expect(errorText(problem, 'generation')).toMatch(/^Не удалось создать изображение/);
    },
  );

  it('keeps the refusal and its values when the server answers 402', async () => {
    globalThis.fetch = vi.fn(
      async () =>
        new Response(JSON.stringify({ success: false, ...refusal(16, 2) }), {
          status: 402,
          headers: { 'content-type': 'application/json' },
        }),
    );
    const error = await generateImage(IMAGE_MODELS.ultra.endpoint, { prompt: 'x' }).catch((e: unknown) => e);
    const problem = problemOf(error, { code: 'PROVIDER_ERROR', message: '' });
    expect(problem).toEqual(refusal(16, 2));
    expect(errorText(problem, 'generation')).toBe('Недостаточно токенов: нужно 16 токенов, а у вас только 2');
  });
});
