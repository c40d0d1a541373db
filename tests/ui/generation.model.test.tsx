// One file: one chart's walk: its table of what each state shows (SPEC) and the steps that drive it
// read side by side.
import { cleanup, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  assign,
  createActor,
  createMachine,
  fromCallback,
  fromPromise,
  waitFor as settled,
  type AnyEventObject,
  type AnyMachineSnapshot,
} from 'xstate';
import { ApiError } from '../../src/api/client';
import type { GenerationReply, ImageRecord } from '../../src/domain/image-record';
import type { Language } from '../../src/i18n';
import {
  balanceShort,
  formPreset,
  generationMachine,
  initialForm,
  type GenerateRequest,
  type GenerationContext,
  type GenerationInputs,
} from '../../src/machines/generation';
import { openApp, type OpenApp } from './support/app';
import { apiError, FakeApi, json, type Reply } from './support/fake-api';
import {
  answers,
  describeInvariants,
  describeScreenModel,
  replyOf,
  type Reached,
  type ScreenModel,
} from './support/model';

/*
 * The generator at /dashboard (SPEC sections 2, 3, 4, 5, 7, 8, 9) walked along its statechart
 * on the real screen. What is expected comes from SPEC and is written here by hand; the
 * Russian wording is the product's (src/i18n/locales), written out so that a change is seen.
 */

// ---------------------------------------------------------------------------------------
// SPEC's catalogue (sections 3, 7, 9), by hand.

const MODELS = ['original', 'ultra', 'core', 'sd3'] as const;
type ModelId = (typeof MODELS)[number];
const COST: Record<ModelId, number> = { original: 2, ultra: 16, core: 6, sd3: 12 };
const ENDPOINT: Record<ModelId, string> = {
  original: '/api/stability/text-to-image',
  ultra: '/api/stability-ultra/generate',
  core: '/api/stability-core/generate',
  sd3: '/api/stability-sd3/generate',
};
const SIZES = [
  '1024x1024',
  '1152x896',
  '896x1152',
  '1216x832',
  '832x1216',
  '1344x768',
  '768x1344',
  '1536x640',
  '640x1536',
];
const RATIOS = ['1:1', '16:9', '21:9', '2:3', '3:2', '4:5', '5:4', '9:16', '9:21'];
const STYLES = [
  'none',
  'anime',
  'cinematic',
  'digital-art',
  'enhance',
  'fantasy-art',
  'isometric',
  'line-art',
  'low-poly',
  'modeling-compound',
  'neon-punk',
  'origami',
  'photographic',
  'pixel-art',
  'tile-texture',
];
const VARIANTS = ['sd3.5-large', 'sd3.5-large-turbo', 'sd3.5-medium'];
const PROMPT_MAX = 2000;
const SEED_MAX = 4294967295;
const IMAGES = '/api/images/my-images';
const START_BALANCE = 50;
/** SPEC section 9: the dashboard previews the latest 6 images. */
const PREVIEW = 6;

const TEMPLATE_KEYS = [
  'portrait',
  'landscape',
  'abstract',
  'character',
  'architecture',
  'food',
  'anime',
  'cyberpunk',
] as const;
/** The template the paths apply; its prompt is the same text in both languages. */
const LANDSCAPE =
  'Misty mountain valley at sunrise, a winding river, pine forests, golden light breaking through clouds, wide-angle landscape photography';

// ---------------------------------------------------------------------------------------
// What the user reads (SPEC's English, the product's Russian).

const plural = (lang: Language, n: number, forms: Record<string, string>) =>
  forms[new Intl.PluralRules(lang).select(n)] ?? forms.other!;
const ruTokens = (n: number) => plural('ru', n, { one: 'токен', few: 'токена', many: 'токенов', other: 'токена' });

const TEXT = {
  en: {
    models: { original: 'Original SD XL', ultra: 'Premium model', core: 'FLUX.1', sd3: 'Stable Diffusion 3.5' },
    tokens: (n: number) => `${n} ${n === 1 ? 'token' : 'tokens'}`,
    generate: (n: number) => `Generate · ${n} ${n === 1 ? 'token' : 'tokens'}`,
    generating: 'Generating…',
    balance: (n: number) => `Your balance: ${n}`,
    labels: {
      prompt: 'Prompt',
      negativePrompt: 'Negative prompt',
      seed: 'Seed',
      size: 'Image size',
      aspectRatio: 'Aspect ratio',
      stylePreset: 'Style preset',
      sd3Model: 'Model variant',
    },
    useLastSeed: 'Use Last Seed',
    templates: ['Portrait', 'Landscape', 'Abstract', 'Character', 'Architecture', 'Food', 'Anime', 'Cyberpunk'],
    rules: {
      promptRequired: 'Prompt is required',
      promptTooLong: 'Prompt must be less than 2000 characters',
      negativeTooLong: 'Negative prompt must be less than 2000 characters',
      seedInvalid: 'Seed must be a number between 0 and 4294967295',
      sizeRequired: 'Image size is required',
      aspectRequired: 'Aspect ratio is required',
      variantRequired: 'Model variant is required for SD3',
    },
    insufficient: (cost: number, balance: number) =>
      `Insufficient tokens. Need ${cost} tokens but only have ${balance}`,
    failed: {
      original: 'Generation failed',
      ultra: 'Ultra generation failed',
      core: 'Core generation failed',
      sd3: 'SD3 generation failed',
    },
    fallback: 'Generation failed. Please try again.',
    /** Issue #28: the loader's way out, and the per-user limit of jobs at once (4 by default). */
    runInBackground: 'Run in background',
    tooMany: 'You have reached the limit of 4 jobs at once. Wait for one to finish or cancel one',
    loader: 'Creating your image…',
    resultTitle: 'Result',
    emptyTitle: 'Choose a model and describe your image',
    result: { model: 'Model', style: 'Style', seed: 'Seed' },
    styles: { cinematic: 'Cinematic' } as Record<string, string>,
    finish: { SUCCESS: 'Success', CONTENT_FILTERED: 'Content filtered' } as Record<string, string>,
    download: 'Download',
    copyPrompt: 'Copy Prompt',
    copied: 'Prompt copied',
    recentTitle: 'Latest images',
    showAll: 'Show All',
    recentEmpty: 'Your images will appear here.',
    open: (prompt: string) => `Open image: ${prompt}`,
    modalTitle: 'Image details',
    close: 'Close',
    regenerate: 'Regenerate',
    viewAll: 'View All Images',
    noStyle: 'None',
    created: 'Nov 25, 2026, 10:40 PM',
    phrases: [
      'Every masterpiece starts with a single idea.',
      'Great things take a moment. Yours is almost here.',
      'Mixing the colours of your imagination…',
      'Creativity is intelligence having fun.',
      'The best art is the art you make today.',
      'Teaching pixels to dream…',
      'Your vision is becoming reality.',
      'Imagination is the beginning of creation.',
      'Good ideas deserve a beautiful picture.',
      'Painting with light and numbers…',
      'Every prompt is a new adventure.',
      'Inspiration is on its way.',
      'Art is not what you see, but what you make others see.',
      'Sketching the first lines…',
      'Patience: the brush is still moving.',
      'Dream big, create bigger.',
      'Adding a touch of magic…',
      'Creativity takes courage. You have it.',
      'The canvas is filling up.',
      'Almost there: polishing the details.',
      'A picture is worth a thousand words. Yours is coming.',
      'Turning words into worlds…',
      'Be brave enough to create something new.',
      'Colour is a power that directly influences the soul.',
      'Your idea is unique, and so will be the image.',
      'Searching for the perfect light…',
      'Every artist was first an amateur.',
      'Composing shapes and shadows…',
      'You are one step closer to your masterpiece.',
      'Creativity is contagious. Pass it on.',
      'Hold on: beauty is loading.',
    ],
  },
  ru: {
    models: { original: 'Original SD XL', ultra: 'Премиум-модель', core: 'FLUX.1', sd3: 'Stable Diffusion 3.5' },
    tokens: (n: number) => `${n} ${ruTokens(n)}`,
    generate: (n: number) => `Сгенерировать · ${n} ${ruTokens(n)}`,
    generating: 'Генерация…',
    balance: (n: number) => `Ваш баланс: ${n}`,
    labels: {
      prompt: 'Промпт',
      negativePrompt: 'Негативный промпт',
      seed: 'Сид',
      size: 'Размер изображения',
      aspectRatio: 'Соотношение сторон',
      stylePreset: 'Стиль',
      sd3Model: 'Вариант модели',
    },
    useLastSeed: 'Последний сид',
    templates: ['Портрет', 'Пейзаж', 'Абстракция', 'Персонаж', 'Архитектура', 'Еда', 'Аниме', 'Киберпанк'],
    rules: {
      promptRequired: 'Введите промпт',
      promptTooLong: 'Промпт должен быть короче 2\u00a0000 символов',
      negativeTooLong: 'Негативный промпт должен быть короче 2\u00a0000 символов',
      seedInvalid: 'Сид должен быть числом от 0 до 4\u00a0294\u00a0967\u00a0295',
      sizeRequired: 'Выберите размер изображения',
      aspectRequired: 'Выберите соотношение сторон',
      variantRequired: 'Для SD3 нужно выбрать вариант модели',
    },
    insufficient: (cost: number, balance: number) =>
      `Недостаточно токенов: ${plural('ru', cost, { one: 'нужен', other: 'нужно' })} ${cost} ${ruTokens(cost)}, а у вас только ${balance}`,
    failed: {
      original: 'Не удалось создать изображение',
      ultra: 'Не удалось создать изображение (Ultra)',
      core: 'Не удалось создать изображение (Core)',
      sd3: 'Не удалось создать изображение (SD3)',
    },
    fallback: 'Не удалось создать изображение. Попробуйте ещё раз.',
    runInBackground: 'Продолжить в фоне',
    tooMany: 'Достигнут предел одновременных заданий: 4. Дождитесь окончания одного из них или отмените его',
    loader: 'Создаём ваше изображение…',
    resultTitle: 'Результат',
    emptyTitle: 'Выберите модель и опишите изображение',
    result: { model: 'Модель', style: 'Стиль', seed: 'Сид' },
    styles: { cinematic: 'Кинематографичный' } as Record<string, string>,
    finish: { SUCCESS: 'Успешно', CONTENT_FILTERED: 'Заблокировано фильтром' } as Record<string, string>,
    download: 'Скачать',
    copyPrompt: 'Копировать промпт',
    copied: 'Промпт скопирован',
    recentTitle: 'Последние изображения',
    showAll: 'Показать все',
    recentEmpty: 'Здесь появятся ваши изображения.',
    open: (prompt: string) => `Открыть изображение: ${prompt}`,
    modalTitle: 'Об изображении',
    close: 'Закрыть',
    regenerate: 'Сгенерировать снова',
    viewAll: 'Все изображения',
    noStyle: 'Без стиля',
    created: '25 нояб. 2026 г., 22:40',
    phrases: [
      'Каждый шедевр начинается с одной идеи.',
      'Великое требует мгновения. Ваше уже почти готово.',
      'Смешиваем краски вашего воображения…',
      'Творчество — это интеллект, который веселится.',
      'Лучшее искусство — то, что вы создаёте сегодня.',
      'Учим пиксели мечтать…',
      'Ваша идея становится реальностью.',
      'Воображение — начало творения.',
      'Хорошие идеи заслуживают красивой картинки.',
      'Рисуем светом и числами…',
      'Каждый промпт — новое приключение.',
      'Вдохновение уже в пути.',
      'Искусство — это не то, что видите вы, а то, что вы показываете другим.',
      'Набрасываем первые линии…',
      'Терпение: кисть ещё в движении.',
      'Мечтайте смело, творите ещё смелее.',
      'Добавляем щепотку магии…',
      'Творчество требует смелости. Она у вас есть.',
      'Холст понемногу заполняется.',
      'Почти готово: шлифуем детали.',
      'Картинка стоит тысячи слов. Ваша уже близко.',
      'Превращаем слова в миры…',
      'Не бойтесь создавать новое.',
      'Цвет — это сила, которая влияет прямо на душу.',
      'Ваша идея уникальна, и изображение будет таким же.',
      'Ищем идеальный свет…',
      'Каждый художник когда-то был любителем.',
      'Составляем формы и тени…',
      'Вы на шаг ближе к своему шедевру.',
      'Творчество заразительно. Делитесь им.',
      'Подождите: красота загружается.',
    ],
  },
};

// ---------------------------------------------------------------------------------------
// Our API's replies (SPEC sections 3 and 7; the error body of DESIGN section 5).

/** 25 Nov 2026, 22:40 local time: the modal's "created" date as written above. */
const CREATED = new Date(2026, 10, 25, 22, 40).toISOString();

function image(id: number, prompt: string, extra: Partial<ImageRecord> = {}): ImageRecord {
  const fileName = `${String(id).padStart(32, 'c')}.png`;
  return {
    id,
    fileName,
    originalName: null,
    imageUrl: `http://localhost/images/${fileName}`,
    prompt,
    width: 1024,
    height: 1024,
    steps: 30,
    cfgScale: 7,
    stylePreset: null,
    size: '1024x1024',
    fileSize: 1_523_456,
    mimeType: 'image/png',
    userId: 1,
    createdAt: CREATED,
    updatedAt: CREATED,
    seed: null,
    model: 'original',
    finish_reason: 'SUCCESS',
    negativePrompt: null,
    aspectRatio: null,
    modelVariant: null,
    thumbnailUrl: `http://localhost/images/thumbs/${fileName}.webp`,
    ...extra,
  };
}

/** The user's latest images as GET /api/images/my-images?page=1&limit=6 answers (newest first). */
const LATEST = [
  image(9, 'Lighthouse at dusk'),
  image(8, 'A bowl of ramen', {
    model: 'core',
    stylePreset: 'cinematic',
    aspectRatio: '16:9',
    size: '1344x768',
    seed: 424242,
  }),
  image(7, 'Snowy owl portrait', { model: 'ultra', aspectRatio: '2:3', size: '832x1216' }),
  image(6, 'Desert caravan at noon'),
  image(5, 'Origami crane'),
  image(4, 'Rainy Tokyo alley'),
];
const PAGE = {
  success: true,
  data: {
    images: LATEST,
    pagination: { currentPage: 1, totalPages: 2, total: 9, hasNext: true, hasPrev: false },
  },
  message: 'Images retrieved successfully',
};
const LIST_FAILED = apiError(500, 'INTERNAL', 'Internal server error');

/**
 * SPEC section 7: success, data, tokens.charged, message. original and core state only the
 * charge (SPEC section 4: the balance drops by tokens.charged); ultra and sd3 also state the
 * balance after it, lower than that (tokens were spent elsewhere meanwhile): the header shows
 * the server's figure.
 */
const SUCCESS: Record<ModelId, GenerationReply> = {
  original: {
    success: true,
    data: image(101, 'A red fox in the snow', { seed: 77 }),
    tokens: { charged: 2 },
    message: 'Image generated successfully',
  },
  ultra: {
    success: true,
    data: image(102, 'A red fox in the snow', { model: 'ultra', aspectRatio: '21:9', size: '1536x640', seed: 4021 }),
    tokens: { charged: 16 },
    balanceAfter: 30,
    message: 'Image generated successfully',
  },
  core: {
    success: true,
    data: image(103, 'A red fox in the snow', {
      model: 'core',
      stylePreset: 'cinematic',
      aspectRatio: '1:1',
      seed: 555,
      mimeType: 'image/webp',
    }),
    tokens: { charged: 6 },
    message: 'Image generated successfully',
  },
  sd3: {
    success: true,
    data: image(104, 'A red fox in the snow', {
      model: 'sd3',
      modelVariant: 'sd3.5-medium',
      aspectRatio: '1:1',
      seed: 90210,
      finish_reason: 'CONTENT_FILTERED',
    }),
    tokens: { charged: 12 },
    balanceAfter: 35,
    message: 'Image generated successfully',
  },
};
/** The server's own words (SPEC section 8: "When present, the server's message is used"). */
const PROVIDER_SAID = 'Stability AI is overloaded, please retry in a minute';
const FAILED_SAID = apiError(502, 'PROVIDER_ERROR', PROVIDER_SAID);
/** A gateway's 502 with no body: no message at all. */
const FAILED_SILENT: Reply = { status: 502 };
/** The server refuses the charge and states the balance (one token short of the model). */
/** Issue #28: one job too many at once: refused before any charge, the limit named. */
const TOO_MANY = apiError(429, 'TOO_MANY_JOBS', 'Too many jobs in progress. Wait for one to finish or cancel one', {
  limit: 4,
});
const refused = (model: ModelId) =>
  apiError(
    402,
    'INSUFFICIENT_TOKENS',
    `Insufficient tokens. Need ${COST[model]} tokens but only have ${COST[model] - 1}`,
    {
      cost: COST[model],
      balance: COST[model] - 1,
    },
  );

/** The error the API client throws for a reply, as the model's event carries it. */
const apiErrorOf = (reply: Reply, model?: ModelId) => {
  const body = reply.body as { code: string; message: string } | undefined;
  if (!body) {
    // src/api/images.ts words a failure without a message as the model's own (SPEC section 8).
    return new ApiError(TEXT.en.failed[model!], reply.status ?? 500, 'PROVIDER_ERROR', { details: { model } });
  }
  return new ApiError(body.message, reply.status ?? 500, body.code, body);
};

/** Where the held request an answering event releases waits, and what it is answered with. */
interface Answer {
  method: string;
  path: string;
  reply: Reply;
  kind: 'images' | 'success' | 'said' | 'silent' | 'refused' | 'tooMany' | 'listFailed';
  model?: ModelId;
}

// ---------------------------------------------------------------------------------------
// What the user has done, as SPEC says it counts: the oracle the rows read.

const PROMPT_SHORT = 'A red fox in the snow';
const PROMPT_MAX_TEXT = 'p'.repeat(PROMPT_MAX);
const PROMPT_OVER = 'p'.repeat(PROMPT_MAX + 1);
const NEGATIVE_OK = 'blurry, watermark';
const NEGATIVE_OVER = 'n'.repeat(PROMPT_MAX + 1);
const SEED_OK = String(SEED_MAX);
const SEED_BAD = String(SEED_MAX + 1);

interface Facts {
  model: ModelId;
  prompt: string;
  negativePrompt: string;
  seed: string;
  size: string;
  aspectRatio: string;
  stylePreset: string;
  sd3Model: string;
  balance: number;
  lastSeed: number | null;
  generating: boolean;
  result: ImageRecord | null;
  error: string | null;
  recent: ImageRecord[] | 'loading';
  modal: ImageRecord | null;
  downloads: number;
}

/** SPEC section 5 in its order: the first rule the form breaks, in the user's language. */
function firstRule(f: Facts, lang: Language): string | null {
  const text = TEXT[lang];
  if (f.prompt.trim() === '') return text.rules.promptRequired;
  if (f.prompt.length > PROMPT_MAX) return text.rules.promptTooLong;
  if (f.negativePrompt.length > PROMPT_MAX) return text.rules.negativeTooLong;
  if (f.seed.trim() !== '' && !(/^\d+$/.test(f.seed.trim()) && Number(f.seed) <= SEED_MAX)) {
    return text.rules.seedInvalid;
  }
  if (f.balance < COST[f.model]) return text.insufficient(COST[f.model], f.balance);
  if (f.model === 'original' && f.size === '') return text.rules.sizeRequired;
  if (f.model !== 'original' && f.aspectRatio === '') return text.rules.aspectRequired;
  if (f.model === 'sd3' && f.sd3Model === '') return text.rules.variantRequired;
  return null;
}

const isAnswer = (event: AnyEventObject) =>
  event.type.startsWith('xstate.done.actor.') || event.type.startsWith('xstate.error.actor.');

/** What the server's answer to a generation does (SPEC sections 4 and 8). */
function answered(f: Facts, answer: Answer, lang: Language) {
  f.generating = false;
  const body = answer.reply.body as
    | (GenerationReply & { code?: undefined })
    | { code: string; message: string; details?: { cost: number; balance: number } }
    | undefined;
  if (answer.kind === 'success') {
    const reply = body as GenerationReply;
    // The current generation, at the front of the images; the balance the server stated, else
    // the old one less tokens.charged.
    f.result = reply.data;
    f.recent = [reply.data, ...(f.recent === 'loading' ? [] : f.recent)].slice(0, PREVIEW);
    f.balance = reply.balanceAfter ?? f.balance - reply.tokens.charged;
    if (reply.data.seed !== null) f.lastSeed = reply.data.seed;
    return;
  }
  if (body === undefined) {
    // No message at all: the model's own failure text.
    f.error = TEXT[lang].failed[answer.model!];
    return;
  }
  const failure = body as { code: string; message: string; details?: { cost: number; balance: number } };
  if (failure.code === 'TOO_MANY_JOBS') {
    // Nothing charged: the balance stays; the limit is named.
    f.error = TEXT[lang].tooMany;
  } else if (failure.code === 'INSUFFICIENT_TOKENS' && failure.details) {
    // A refusal states the cost and the balance; the header takes the balance.
    f.error = TEXT[lang].insufficient(failure.details.cost, failure.details.balance);
    f.balance = failure.details.balance;
  } else {
    // The server's own words.
    f.error = failure.message;
  }
}

function factsOf(events: readonly AnyEventObject[], lang: Language): Facts {
  const f: Facts = {
    model: 'original',
    prompt: '',
    negativePrompt: '',
    seed: '',
    size: SIZES[0]!,
    aspectRatio: RATIOS[0]!,
    stylePreset: 'none',
    sd3Model: VARIANTS[0]!,
    balance: START_BALANCE,
    lastSeed: null,
    generating: false,
    result: null,
    error: null,
    recent: 'loading',
    modal: null,
    downloads: 0,
  };
  for (const event of events) {
    // SPEC section 4: while generating the form is disabled.
    // Issue #28: Run in background frees the form, the prompt kept; the job goes on elsewhere.
    if (f.generating && event.type === 'RUN_IN_BACKGROUND') {
      f.generating = false;
      continue;
    }
    if (f.generating && !isAnswer(event)) continue;
    const e = event as AnyEventObject & Record<string, unknown>;
    switch (event.type) {
      case 'FIELD.CHANGE':
        (f as unknown as Record<string, string>)[e.field as string] = e.value as string;
        break;
      case 'TEMPLATE.APPLY':
        f.prompt = LANDSCAPE;
        break;
      case 'SEED.USE_LAST':
        if (f.lastSeed !== null) f.seed = String(f.lastSeed);
        break;
      case 'SUBMIT': {
        const rule = firstRule(f, lang);
        f.error = rule;
        f.generating = rule === null;
        break;
      }
      case 'IMAGE.OPEN':
        f.modal = e.image as ImageRecord;
        break;
      case 'IMAGE.CLOSE':
        f.modal = null;
        break;
      case 'DOWNLOAD':
        f.downloads += 1;
        break;
      case 'COPY_PROMPT':
        break;
      default: {
        const answer = replyOf<Answer>(event);
        // SPEC section 8: a failed image fetch is only logged (the preview stays empty).
        if (answer.kind === 'images') {
          f.recent = LATEST;
          // #26: after a reload, Use Last Seed takes the newest image's seed.
          f.lastSeed ??= LATEST.find((image) => image.seed !== null)?.seed ?? null;
        } else if (answer.kind === 'listFailed') f.recent = [];
        else answered(f, answer, lang);
      }
    }
  }
  return f;
}

// ---------------------------------------------------------------------------------------
// The screen.

const disabled = (element: Element) => element.matches(':disabled');
/** An element by its test id (a plain selector: the screen is checked after every step). */
const tid = <T extends HTMLElement = HTMLElement>(id: string) => {
  const element = document.querySelector<T>(`[data-testid="${id}"]`);
  if (!element) throw new Error(`no [data-testid="${id}"] on the screen`);
  return element;
};
const byId = <T extends HTMLElement>(id: string) => {
  const element = document.getElementById(id);
  if (!element) throw new Error(`no #${id} on the screen`);
  return element as T;
};
const submit = () => tid<HTMLButtonElement>('generate');
const resultPanel = () => tid('result-panel');
const modal = () => document.querySelector<HTMLElement>(`[data-testid="image-modal"]`);
const optionValues = (select: HTMLSelectElement) => [...select.options].map((o) => o.value);
const buttonsOf = (element: Element) => [...element.querySelectorAll('button')].map((b) => b.textContent);
const useLastSeed = (lang: Language) =>
  within(tid('generation-form')).getByText(TEXT[lang].useLastSeed).closest('button')!;

/** The form as SPEC section 2 lists it, with the values the user gave it. */
/**
 * Issue #26 item 8: one rule for templates on both screens, said next to them: they fill in
 * an English prompt (in Russian too), as the models understand English best.
 */
const TEMPLATES_NOTE: Record<Language, string> = {
  en: 'Templates fill in an English prompt: the models understand English best.',
  ru: 'Шаблоны вставляют промпт на английском: модели лучше всего понимают английский.',
};

function formShows(f: Facts, lang: Language) {
  const text = TEXT[lang];
  // Model choice: the four models, with their costs (SPEC sections 3 and 9).
  for (const m of MODELS) {
    const radio = tid<HTMLInputElement>(`model-${m}`);
    expect(radio.checked, `model ${m} chosen`).toBe(f.model === m);
    expect(disabled(radio)).toBe(f.generating);
    expect(radio.closest('label')!.textContent).toBe(`${text.models[m]}${text.tokens(COST[m])}`);
  }
  const prompt = byId<HTMLTextAreaElement>('prompt');
  expect(prompt.value).toBe(f.prompt);
  expect(disabled(prompt)).toBe(f.generating);
  // Numbers grouped as the language does, as everywhere (issue #26 item 8): 0/2 000, 0/2,000.
  const grouped = (n: number) => new Intl.NumberFormat(lang).format(n);
  expect(tid('templates-note').textContent).toBe(TEMPLATES_NOTE[lang]);
  expect(tid('prompt-counter').textContent).toBe(`${grouped(f.prompt.length)}/${grouped(PROMPT_MAX)}`);
  expect(byId<HTMLTextAreaElement>('negativePrompt').value).toBe(f.negativePrompt);
  expect(byId<HTMLInputElement>('seed').value).toBe(f.seed);
  // original takes an image size, the other models an aspect ratio (SPEC section 2).
  const size = document.getElementById('size') as HTMLSelectElement | null;
  const ratio = document.getElementById('aspectRatio') as HTMLSelectElement | null;
  const style = document.getElementById('stylePreset') as HTMLSelectElement | null;
  const variant = document.getElementById('sd3Model') as HTMLSelectElement | null;
  if (f.model === 'original') {
    expect(ratio).toBeNull();
    expect(optionValues(size!)).toEqual(SIZES);
    expect(size!.value).toBe(f.size);
  } else {
    expect(size).toBeNull();
    expect(optionValues(ratio!)).toEqual(RATIOS);
    expect(ratio!.value).toBe(f.aspectRatio);
  }
  if (f.model === 'core') {
    expect(optionValues(style!)).toEqual(STYLES);
    expect(style!.value).toBe(f.stylePreset);
  } else {
    expect(style).toBeNull();
  }
  if (f.model === 'sd3') {
    expect(optionValues(variant!)).toEqual(VARIANTS);
    expect(variant!.value).toBe(f.sd3Model);
  } else {
    expect(variant).toBeNull();
  }
  for (const field of [size, ratio, style, variant, byId('negativePrompt'), byId('seed')]) {
    if (field) expect(disabled(field)).toBe(f.generating);
  }
  // Eight templates (SPEC section 2).
  const templates = TEMPLATE_KEYS.map((key) => tid(`template-${key}`));
  expect(templates.map((b) => b.textContent)).toEqual(text.templates);
  for (const button of templates) expect(disabled(button)).toBe(f.generating);
  expect(disabled(useLastSeed(lang))).toBe(f.generating || f.lastSeed === null);
  // SPEC section 5: disabled while generating, on a blank prompt, or when the balance is short.
  const cost = COST[f.model];
  expect(submit().disabled).toBe(f.generating || f.prompt.trim() === '' || f.balance < cost);
  expect(submit().textContent).toBe(f.generating ? text.generating : text.generate(cost));
  expect(tid('generation-form').textContent).toContain(text.balance(f.balance));
  const alert = document.querySelector(`[data-testid="generation-error"]`);
  expect(alert?.textContent ?? null).toBe(f.error);
}

/** SPEC section 2: the latest image with its details and actions, or the models and costs. */
function resultShows(f: Facts, lang: Language) {
  const text = TEXT[lang];
  const panel = resultPanel();
  expect(panel.querySelector('h2')!.textContent).toBe(text.resultTitle);
  if (f.result) {
    const r = f.result;
    expect(panel.querySelector('img')!.getAttribute('src')).toBe(r.imageUrl);
    expect(tid('result-prompt').textContent).toBe(r.prompt);
    expect(tid('result-size').textContent).toBe(r.size);
    const modelOrStyle = tid('result-model');
    if (r.stylePreset) {
      expect(modelOrStyle.previousElementSibling!.textContent).toBe(text.result.style);
      expect(modelOrStyle.textContent).toBe(text.styles[r.stylePreset]);
    } else {
      expect(modelOrStyle.previousElementSibling!.textContent).toBe(text.result.model);
      expect(modelOrStyle.textContent).toBe(text.models[r.model as ModelId]);
    }
    expect(tid('result-finish-reason').textContent).toBe(text.finish[r.finish_reason!]);
    // Issue #26: the seed the image was made with, so a blank seed's random pick can be reused.
    const seed = document.querySelector('[data-testid="result-seed"]');
    if (r.seed === null) expect(seed).toBeNull();
    else {
      expect(seed?.previousElementSibling?.textContent).toBe(text.result.seed);
      expect(seed?.textContent).toBe(String(r.seed));
    }
    expect(buttonsOf(panel)).toEqual([text.download, text.copyPrompt]);
  } else {
    const empty = tid('result-empty');
    expect(empty.textContent).toContain(text.emptyTitle);
    const items = [...empty.querySelectorAll('li')];
    expect(items.map((li) => li.firstElementChild!.textContent)).toEqual(
      MODELS.map((m) => `${text.models[m]}${text.tokens(COST[m])}`),
    );
  }
}

/** SPEC section 2: the latest 6 images with a Show All link to /gallery; the image modal. */
function recentShows(f: Facts, reached: Reached) {
  const text = TEXT[reached.lang];
  const section = screen.getByText(text.recentTitle).closest('section')!;
  const showAll = within(section).getByText(text.showAll);
  expect(showAll.getAttribute('href')).toBe('/gallery');
  if (f.recent === 'loading') {
    expect(reached.matches({ recent: 'loading' })).toBe(true);
    expect(section.querySelector('[role="status"]')).not.toBeNull();
  } else if (f.recent.length === 0) {
    expect(section.textContent).toContain(text.recentEmpty);
  } else {
    const buttons = [...tid('recent-images').querySelectorAll('button')];
    expect(buttons.map((b) => b.getAttribute('aria-label'))).toEqual(f.recent.map((i) => text.open(i.prompt)));
  }
  const dialog = modal();
  if (!f.modal) {
    expect(reached.matches({ modal: 'closed' })).toBe(true);
    expect(dialog).toBeNull();
    return;
  }
  // SPEC section 2 "Image modal": prompt, style, size, format, created date, Download;
  // Regenerate (to /dashboard with the prompt) or View All Images (to /gallery); no Copy Prompt.
  expect(reached.matches({ modal: 'open' })).toBe(true);
  const m = within(dialog!);
  const image = f.modal;
  expect(m.getByText(text.modalTitle)).toBeTruthy();
  expect(tid('modal-prompt').textContent).toBe(image.prompt);
  expect(m.getByText(image.stylePreset ? text.styles[image.stylePreset]! : text.noStyle)).toBeTruthy();
  expect(m.getByText(image.aspectRatio ? `${image.size} (${image.aspectRatio})` : image.size)).toBeTruthy();
  expect(m.getByText(image.mimeType)).toBeTruthy();
  expect(m.getByText(text.created)).toBeTruthy();
  // The close button (an icon), Download; no Copy Prompt on the dashboard.
  expect(buttonsOf(dialog!)).toEqual(['', text.download]);
  const links = Object.fromEntries(
    [...dialog!.querySelectorAll('a')].map((a) => [a.textContent, a.getAttribute('href')]),
  );
  const regenerate = new URL(links[text.regenerate]!, 'http://localhost');
  expect(regenerate.pathname).toBe('/dashboard');
  expect(regenerate.searchParams.get('prompt')).toBe(image.prompt);
  expect(links[text.viewAll]).toBe('/gallery');
}

function dashboardShows(ui: OpenApp, reached: Reached): Facts {
  const f = factsOf(reached.events, reached.lang);
  formShows(f, reached.lang);
  resultShows(f, reached.lang);
  recentShows(f, reached);
  return f;
}

/** SPEC section 7: the call each model makes, with the form's values. */
function requestSent(ui: OpenApp, f: Facts) {
  const sent = ui.api.sent('POST', ENDPOINT[f.model]);
  expect(sent.length, `a request to ${ENDPOINT[f.model]}`).toBeGreaterThan(0);
  const body = sent.at(-1)!.body as Record<string, unknown>;
  const optional = {
    ...(f.negativePrompt.trim() ? { negative_prompt: f.negativePrompt } : {}),
    ...(f.seed.trim() ? { seed: Number(f.seed) } : {}),
  };
  switch (f.model) {
    case 'original': {
      const [width, height] = f.size.split('x').map(Number);
      expect(body).toMatchObject({ prompt: f.prompt, width, height });
      break;
    }
    case 'ultra':
      expect(body).toEqual({ prompt: f.prompt, aspect_ratio: f.aspectRatio, ...optional });
      break;
    case 'core':
      expect(body).toEqual({ prompt: f.prompt, aspect_ratio: f.aspectRatio, style_preset: f.stylePreset, ...optional });
      break;
    case 'sd3':
      expect(body).toEqual({ prompt: f.prompt, aspect_ratio: f.aspectRatio, model: f.sd3Model, ...optional });
      break;
  }
}

// ---------------------------------------------------------------------------------------
// The model.

const ctx = (snapshot: AnyMachineSnapshot) => snapshot.context as GenerationContext;
/** Stands in for the session in the pure traversal: no user, so it never syncs a balance. */
const session = createActor(createMachine({ context: { user: null } })).start();
const input = { session, balance: START_BALANCE } as unknown as GenerationInputs;

const promptClass = (prompt: string) =>
  prompt.trim() === '' ? 'blank' : prompt.length > PROMPT_MAX ? 'over' : prompt.length === PROMPT_MAX ? 'max' : 'ok';
const seedClass = (seed: string) =>
  seed === '' ? 'none' : /^\d+$/.test(seed) && Number(seed) <= SEED_MAX ? 'ok' : 'bad';
/** The outcomes the model's events carry, made once (the traversal asks for them often). */
const ANSWERED = Object.fromEntries(
  MODELS.map((m) => [
    m,
    {
      success: { output: SUCCESS[m] },
      said: { error: apiErrorOf(FAILED_SAID) },
      tooMany: { error: apiErrorOf(TOO_MANY) },
      silent: { error: apiErrorOf(FAILED_SILENT, m) },
      refused: { error: apiErrorOf(refused(m)) },
    },
  ]),
) as Record<
  ModelId,
  Record<'success' | 'said' | 'silent' | 'refused' | 'tooMany', { output: unknown } | { error: unknown }>
>;
const change = (field: string, value: string) => ({ type: 'FIELD.CHANGE' as const, field, value });

/** A label for what a sample does, so that SPEC's distinct cases are distinct transitions. */
function sampleOf(event: AnyEventObject): string {
  const e = event as AnyEventObject & Record<string, unknown>;
  if (e.type === 'FIELD.CHANGE') {
    const value = e.value as string;
    if (e.field === 'prompt') return `prompt:${promptClass(value)}`;
    if (e.field === 'negativePrompt') return `negativePrompt:${value.length > PROMPT_MAX ? 'over' : 'ok'}`;
    if (e.field === 'seed') return `seed:${value}`;
    return `${e.field as string}:${value}`;
  }
  if (isAnswer(event)) {
    const answer = replyOf<Answer>(event);
    // The server's own words read the same whichever model failed.
    return answer.kind === 'said' ? answer.kind : `${answer.kind}:${answer.model ?? ''}`;
  }
  return '';
}

/** The rules of SPEC section 5 the form breaks (those the paths try), or whether it is at the limit. */
const brokenRules = (form: GenerationContext['form']) => {
  const broken = [
    promptClass(form.prompt) === 'over' ? 'prompt' : '',
    form.negativePrompt.length > PROMPT_MAX ? 'negative prompt' : '',
    seedClass(form.seed) === 'bad' ? 'seed' : '',
  ].filter(Boolean);
  if (broken.length > 0) return broken.join(' + ');
  return promptClass(form.prompt) === 'max' ? 'prompt at 2000' : 'none';
};

const editable = (value: unknown) => (value === 'generating' ? 'generating' : 'editable');

export const model: ScreenModel<OpenApp> = {
  machine: generationMachine,
  input,
  events: (snapshot: AnyMachineSnapshot) => {
    const c = ctx(snapshot);
    // The page first loads the latest images (the form is there meanwhile, but the paths
    // let the server answer first: a result before the list would race with it).
    if (snapshot.matches({ recent: 'loading' })) {
      return [
        ...answers(snapshot, 'loadRecent', { output: LATEST }, {
          method: 'GET',
          path: IMAGES,
          reply: json(PAGE),
          kind: 'images',
        } satisfies Answer),
        ...answers(snapshot, 'loadRecent', { error: apiErrorOf(LIST_FAILED) }, {
          method: 'GET',
          path: IMAGES,
          reply: LIST_FAILED,
          kind: 'listFailed',
        } satisfies Answer),
      ];
    }
    // A modal dialog: only its own controls answer.
    if (snapshot.matches({ modal: 'open' })) {
      return [{ type: 'IMAGE.CLOSE' }, { type: 'DOWNLOAD', image: c.selected! }];
    }
    const generating = snapshot.matches({ generator: 'generating' });
    const m = c.form.model as ModelId;
    const f = c.form;
    const broken =
      promptClass(f.prompt) === 'over' || f.negativePrompt.length > PROMPT_MAX || seedClass(f.seed) === 'bad';
    // SPEC section 5's rules are tried on the first model before anything was generated or
    // refused; a form that breaks one is mended before another model is chosen.
    const tryRules = c.balance === START_BALANCE && c.current === null && m === 'original';
    const pressable = f.prompt.trim() !== '' && c.balance >= COST[m];
    const resting = snapshot.matches({ generator: 'idle' }) || snapshot.matches({ generator: 'result' });
    const answer = (kind: Answer['kind'], reply: Reply, outcome: { output: unknown } | { error: unknown }) =>
      answers(snapshot, 'generate', outcome, {
        method: 'POST',
        path: ENDPOINT[m],
        reply,
        kind,
        model: m,
      } satisfies Answer);
    return [
      // From the first model to each other one, and back (a person may pick any; few samples).
      ...(broken
        ? []
        : m === 'original'
          ? MODELS.slice(1).map((other) => change('model', other))
          : [change('model', 'original')]),
      m === 'original' ? change('size', '1536x640') : change('aspectRatio', '21:9'),
      ...(m === 'core' ? [change('stylePreset', 'cinematic')] : []),
      ...(m === 'sd3' ? [change('sd3Model', 'sd3.5-medium')] : []),
      { type: 'TEMPLATE.APPLY', prompt: LANDSCAPE },
      change('prompt', '   '),
      ...(tryRules
        ? [
            change('prompt', PROMPT_SHORT),
            change('prompt', PROMPT_MAX_TEXT),
            change('prompt', PROMPT_OVER),
            change('negativePrompt', NEGATIVE_OK),
            change('negativePrompt', NEGATIVE_OVER),
            change('seed', SEED_OK),
            change('seed', SEED_BAD),
          ]
        : []),
      // Use Last Seed once there is one (and, before, a click on it that does nothing).
      ...(c.lastSeed !== null || snapshot.matches({ generator: 'idle' }) ? [{ type: 'SEED.USE_LAST' }] : []),
      // The button can be pressed (SPEC section 5), or is tried while disabled.
      ...(pressable || generating ? [{ type: 'SUBMIT' }] : []),
      // The full-screen loader covers the page while generating; the modal is opened at rest.
      ...(resting && c.recent.length > 0 ? [{ type: 'IMAGE.OPEN', image: c.recent[0]! }] : []),
      ...(!generating && c.current
        ? [
            { type: 'DOWNLOAD', image: c.current },
            { type: 'COPY_PROMPT', prompt: c.current.prompt },
          ]
        : []),
      // One image a path, from the first balance, and refusals before any: the balances stay few.
      ...(c.balance === START_BALANCE ? answer('success', json(SUCCESS[m]), ANSWERED[m].success) : []),
      ...answer('said', FAILED_SAID, ANSWERED[m].said),
      ...answer('silent', FAILED_SILENT, ANSWERED[m].silent),
      ...(c.current === null && m === 'original' ? answer('tooMany', TOO_MANY, ANSWERED[m].tooMany) : []),
      // Issue #28: the loader offers Run in background.
      ...(generating ? [{ type: 'RUN_IN_BACKGROUND' }] : []),
      // Refusals word the cost with Russian plurals: "2 токена" and "16 токенов" tell them apart.
      ...(c.current === null && (m === 'original' || m === 'ultra')
        ? answer('refused', refused(m), ANSWERED[m].refused)
        : []),
    ];
  },
  serializeState: (snapshot: AnyMachineSnapshot) => {
    const c = ctx(snapshot);
    return JSON.stringify([
      snapshot.value,
      c.form.model,
      promptClass(c.form.prompt),
      c.form.negativePrompt.length > PROMPT_MAX,
      seedClass(c.form.seed),
      c.balance,
      c.current?.id ?? null,
      c.recent[0]?.id ?? null,
      c.selected?.id ?? null,
    ]);
  },
  // SPEC section 5 and 8 word each refusal and failure: every text is a transition of its own.
  edgeKey: (before: AnyMachineSnapshot, event: AnyEventObject, after: AnyMachineSnapshot) => {
    const b = before.value as Record<string, string>;
    const a = after.value as Record<string, string>;
    const type = event.type.replace(/^(xstate\.(done|error)\.actor)\..*$/, '$1');
    if (/^(IMAGE\.|DOWNLOAD|COPY_PROMPT)/.test(event.type)) return JSON.stringify(['modal', b.modal, type, a.modal]);
    if (isAnswer(event) && replyOf<Answer>(event).path === IMAGES) {
      return JSON.stringify(['recent', type, sampleOf(event)]);
    }
    // Edits behave alike in idle, result and error (the message stays); SUBMIT and the answers do not.
    if (/^(FIELD|TEMPLATE|SEED)/.test(event.type)) {
      // While generating every control of a field is disabled alike: one transition a field.
      const what =
        b.generator === 'generating'
          ? ((event as { field?: string }).field ?? '')
          : event.type === 'SEED.USE_LAST'
            ? `last seed: ${ctx(before).lastSeed !== null}`
            : sampleOf(event);
      return JSON.stringify(['edit', editable(b.generator), type, what]);
    }
    const error = ctx(after).error;
    return JSON.stringify([
      'generator',
      b.generator,
      type,
      sampleOf(event),
      // From a fresh form: which rules the form breaks (by hand, so that two broken at once
      // show SPEC's order), and a prompt of exactly 2000 characters, accepted like a short one.
      event.type === 'SUBMIT' && b.generator === 'idle' ? brokenRules(ctx(before).form) : '',
      a.generator,
      error?.message ?? null,
    ]);
  },
  open: async (lang: Language) => {
    const api = new FakeApi().hold('GET', IMAGES);
    for (const m of MODELS) api.hold('POST', ENDPOINT[m]);
    api.on('GET', /^\/images\//, { status: 200, body: 'png bytes' });
    const ui = await openApp('/dashboard', { lang, api });
    await screen.findByTestId('generation-form', {}, { timeout: 10_000 });
    return ui;
  },
  close: (ui: OpenApp) => ui.close(),
  async perform(ui: OpenApp, event: AnyEventObject, before: AnyMachineSnapshot) {
    const { user, api, lang } = ui;
    const text = TEXT[lang];
    const busy = before.matches({ generator: 'generating' });
    const e = event as AnyEventObject & Record<string, unknown>;
    switch (event.type) {
      case 'FIELD.CHANGE': {
        const field = e.field as keyof typeof text.labels | 'model';
        const value = e.value as string;
        if (field === 'model') {
          const radio = tid(`model-${value}`);
          if (busy) return expect(disabled(radio)).toBe(true);
          return user.click(radio);
        }
        const control = screen.getByLabelText(text.labels[field]);
        if (busy) return expect(disabled(control)).toBe(true);
        if (control instanceof HTMLSelectElement) return user.selectOptions(control, value);
        await user.clear(control);
        // A few keys are typed; longer texts are pasted, as a person may (and faster to run).
        if (value.length <= 3) return user.type(control, value);
        await user.click(control);
        return user.paste(value);
      }
      case 'TEMPLATE.APPLY': {
        const button = within(tid('generation-form')).getByText(text.templates[1]!);
        if (busy) return expect(disabled(button)).toBe(true);
        return user.click(button);
      }
      case 'SEED.USE_LAST':
        // Disabled while generating, and before there is a last seed: the click does nothing.
        return user.click(useLastSeed(lang));
      case 'SUBMIT':
        if (busy) return expect(submit().disabled).toBe(true);
        return user.click(submit());
      case 'RUN_IN_BACKGROUND': {
        // Issue #28: the waiting request is let go (the server's job goes on) and the queue
        // reads its list again.
        const listed = api.sent('GET', '/api/jobs').length;
        const waiting = api.sent('POST', ENDPOINT[(before.context as GenerationContext).form.model as ModelId]).at(-1)!;
        await user.click(tid('run-in-background'));
        expect(waiting.signal?.aborted, 'the waiting request aborted').toBe(true);
        await waitFor(() => expect(api.sent('GET', '/api/jobs').length).toBeGreaterThan(listed));
        return;
      }
      case 'IMAGE.OPEN':
        return user.click(screen.getByLabelText(text.open((e.image as ImageRecord).prompt)));
      case 'IMAGE.CLOSE':
        return user.click(within(modal()!).getByLabelText(text.close));
      case 'DOWNLOAD': {
        const where = before.matches({ modal: 'open' }) ? modal()! : resultPanel();
        return user.click(within(where).getByText(text.download));
      }
      case 'COPY_PROMPT':
        return user.click(within(resultPanel()).getByText(text.copyPrompt));
      default: {
        const answer = replyOf<Answer>(event);
        await api.answerAll(answer.method, answer.path, answer.reply);
        return;
      }
    }
  },
  sees: [
    [
      { generator: 'generating' },
      {
        says: 'SPEC 2/4/7: the form disabled, a full-screen loader with a bar short of 100 and one of 31 phrases; the model’s call with the form’s values',
        check: (ui: OpenApp, reached: Reached) => {
          const f = dashboardShows(ui, reached);
          const text = TEXT[reached.lang];
          const overlay = tid('generating-overlay');
          expect(overlay.getAttribute('role')).toBe('dialog');
          expect(overlay.querySelector('h2')!.textContent).toBe(text.loader);
          const bar = overlay.querySelector('[role="progressbar"]')!;
          const now = Number(bar.getAttribute('aria-valuenow'));
          expect(now).toBeGreaterThan(0);
          expect(now).toBeLessThan(100);
          expect(text.phrases).toContain(tid('motivational-phrase').textContent);
          // Issue #28: the loader, its phrase and bar as SPEC has them, and Run in background.
          expect(tid('run-in-background').textContent).toBe(text.runInBackground);
          requestSent(ui, f);
        },
      },
    ],
    [
      { generator: 'result' },
      {
        says: 'SPEC 2/4: the latest image with prompt, size, model or style, finish reason, Download and Copy Prompt; the charge taken',
        check: (ui: OpenApp, reached: Reached) => {
          dashboardShows(ui, reached);
          expect(document.querySelector(`[data-testid="generating-overlay"]`)).toBeNull();
          expect(document.querySelector(`[data-testid="generation-result"]`)).toBeTruthy();
        },
      },
    ],
    [
      { generator: 'error' },
      {
        says: 'SPEC 4/5/8: the first failing rule, the refusal or the server’s failure under the form; the form usable again',
        check: (ui: OpenApp, reached: Reached) => {
          const f = dashboardShows(ui, reached);
          expect(document.querySelector(`[data-testid="generating-overlay"]`)).toBeNull();
          expect(tid('generation-error').getAttribute('role')).toBe('alert');
          expect(f.error).not.toBeNull();
        },
      },
    ],
    [
      { generator: 'idle' },
      {
        says: 'SPEC 2: the form, the models with their costs before any result, the latest images',
        check: (ui: OpenApp, reached: Reached) => {
          dashboardShows(ui, reached);
          expect(document.querySelector(`[data-testid="generating-overlay"]`)).toBeNull();
        },
      },
    ],
  ],
  always: {
    says: 'SPEC 2/7: at /dashboard, the header shows the balance the server last stated; downloads and copies',
    check: async (ui: OpenApp, reached: Reached) => {
      const f = factsOf(reached.events, reached.lang);
      const text = TEXT[reached.lang];
      expect(ui.location()).toBe('/dashboard');
      expect(tid('token-balance').textContent).toBe(text.tokens(f.balance));
      expect(ui.api.strays()).toEqual([]);
      // SPEC section 5: the list asks for page 1 and 6 images.
      for (const r of ui.api.sent('GET', IMAGES)) expect(r.path).toBe(`${IMAGES}?page=1&limit=${PREVIEW}`);
      // SPEC section 7: saved as imagegen_{id}_{fileName}.jpg.
      expect(ui.downloads).toHaveLength(f.downloads);
      const last = reached.events.at(-1);
      if (last?.type === 'DOWNLOAD') {
        const shown = f.modal ?? f.result!;
        expect(ui.downloads.at(-1)).toBe(`imagegen_${shown.id}_${shown.fileName}.jpg`);
      }
      if (last?.type === 'COPY_PROMPT') {
        expect(await navigator.clipboard.readText()).toBe(f.result!.prompt);
        expect(document.querySelector('[data-kind="success"]')?.textContent).toBe(text.copied);
      }
    },
  },
};

// Long paths: each of the up to 24 steps is a gesture, a server answer and the checks.
vi.setConfig({ testTimeout: 20_000 });

describeScreenModel('generation', model);

/** SPEC section 5 read off the form the machine holds, for the invariants (English texts). */
const rulesOf = (c: GenerationContext) =>
  firstRule(
    {
      ...factsOf([], 'en'),
      ...c.form,
      model: c.form.model as ModelId,
      balance: c.balance,
    },
    'en',
  );

describeInvariants('generation', model, [
  {
    name: 'nothing the user does while an image is generated changes anything (the form is disabled)',
    step: (before, event, after) =>
      !before.matches({ generator: 'generating' }) ||
      event.type.startsWith('xstate.') ||
      JSON.stringify(before.context) === JSON.stringify(after.context),
  },
  {
    name: 'an image is requested only when every rule of SPEC section 5 passes',
    step: (before, _event, after) =>
      before.matches({ generator: 'generating' }) ||
      !after.matches({ generator: 'generating' }) ||
      rulesOf(ctx(after)) === null,
  },
  {
    name: 'a refused SUBMIT shows the first failing rule of SPEC section 5, in its order',
    step: (before, event, after) =>
      event.type !== 'SUBMIT' ||
      before.matches({ generator: 'generating' }) ||
      after.matches({ generator: 'generating' }) ||
      ctx(after).error?.message === rulesOf(ctx(before)),
  },
  {
    name: 'the balance is never negative',
    state: (snapshot) => ctx(snapshot).balance >= 0,
  },
  {
    name: 'the balance is the last the server stated (after the charge, or in a refusal), else unchanged',
    step: (before, event, after) => {
      const was = ctx(before).balance;
      const is = ctx(after).balance;
      if (!isAnswer(event) || replyOf<Answer>(event).path === IMAGES) return is === was;
      if (replyOf<Answer>(event).kind === 'success') {
        const reply = (event as unknown as { output: GenerationReply }).output;
        return is === (reply.balanceAfter ?? was - reply.tokens.charged);
      }
      const body = replyOf<Answer>(event).reply.body as { details?: { balance?: number } } | undefined;
      return is === (body?.details?.balance ?? was);
    },
  },
  {
    name: 'a new image is the current one and leads the preview, which never holds more than 6',
    state: (snapshot) => ctx(snapshot).recent.length <= PREVIEW,
    step: (_before, event, after) => {
      if (!isAnswer(event) || replyOf<Answer>(event).kind !== 'success') return true;
      const made = (event as unknown as { output: GenerationReply }).output.data.id;
      return ctx(after).current?.id === made && ctx(after).recent[0]?.id === made;
    },
  },
  {
    name: 'the loader’s bar is short of 100 while generating (SPEC section 2)',
    state: (snapshot) => !snapshot.matches({ generator: 'generating' }) || ctx(snapshot).progress < 100,
  },
]);

// ---------------------------------------------------------------------------------------
// What the paths do not reach: each rule's wording in both languages (a path runs in one),
// the address (Regenerate's parameters), and the rules a disabled button keeps a person from
// trying (those on the machine itself).

describe('generation: the screen in both languages, and at an address', () => {
  afterEach(() => cleanup());
  const openAt = async (path: string, lang: Language) => {
    const api = new FakeApi().on('GET', IMAGES, json(PAGE));
    for (const m of MODELS) api.hold('POST', ENDPOINT[m]);
    const opened = await openApp(path, { lang, api });
    await screen.findByTestId('generation-form', {}, { timeout: 10_000 });
    return opened;
  };

  it.each(['ru', 'en'] as const)(
    '[%s] SPEC 5 rules 6 to 8: a missing ratio, variant or size is refused in order',
    async (lang) => {
      const text = TEXT[lang];
      const ui = await openAt('/dashboard?prompt=A%20red%20fox&model=sd3&aspectRatio=&variant=', lang);
      try {
        const alert = () => document.querySelector('[data-testid="generation-error"]')?.textContent;
        expect(byId<HTMLTextAreaElement>('prompt').value).toBe('A red fox');
        expect(tid<HTMLInputElement>('model-sd3').checked).toBe(true);
        await ui.user.click(submit());
        await waitFor(() => expect(alert()).toBe(text.rules.aspectRequired));
        await ui.user.selectOptions(screen.getByLabelText(text.labels.aspectRatio), '9:21');
        await ui.user.click(submit());
        await waitFor(() => expect(alert()).toBe(text.rules.variantRequired));
        await ui.user.click(tid('model-original'));
        await ui.user.click(submit());
        // original needs a size; the address named none, so it is the default (SPEC section 3).
        await waitFor(() => expect(ui.api.sent('POST', ENDPOINT.original)).toHaveLength(1));
        expect(ui.api.sent('POST', ENDPOINT.original)[0]!.body).toMatchObject({ width: 1024, height: 1024 });
      } finally {
        ui.close();
      }
    },
  );

  it.each(['ru', 'en'] as const)(
    '[%s] SPEC 5 rules 2 to 4: the first broken rule is shown, then the next, in both languages',
    async (lang) => {
      const text = TEXT[lang];
      const ui = await openAt('/dashboard', lang);
      try {
        const alert = () => document.querySelector('[data-testid="generation-error"]')?.textContent;
        const fill = async (field: keyof typeof text.labels, value: string) => {
          const control = screen.getByLabelText(text.labels[field]);
          await ui.user.clear(control);
          if (value === '') return;
          await ui.user.click(control);
          await ui.user.paste(value);
        };
        await fill('prompt', PROMPT_OVER);
        await fill('negativePrompt', NEGATIVE_OVER);
        await fill('seed', SEED_BAD);
        await ui.user.click(submit());
        await waitFor(() => expect(alert()).toBe(text.rules.promptTooLong));
        await fill('prompt', PROMPT_MAX_TEXT);
        await ui.user.click(submit());
        await waitFor(() => expect(alert()).toBe(text.rules.negativeTooLong));
        await fill('negativePrompt', 'n'.repeat(PROMPT_MAX));
        await ui.user.click(submit());
        await waitFor(() => expect(alert()).toBe(text.rules.seedInvalid));
        await fill('seed', SEED_OK);
        await ui.user.click(submit());
        await waitFor(() => expect(ui.api.sent('POST', ENDPOINT.original)).toHaveLength(1));
        expect(ui.api.sent('POST', ENDPOINT.original)[0]!.body).toMatchObject({ seed: SEED_MAX });
      } finally {
        ui.close();
      }
    },
  );

  it.each(['ru', 'en'] as const)('[%s] SPEC 5 rule 6: original with no size is refused', async (lang) => {
    const ui = await openAt('/dashboard?prompt=A%20red%20fox&model=original&size=', lang);
    try {
      await ui.user.click(submit());
      await waitFor(() =>
        expect(document.querySelector('[data-testid="generation-error"]')?.textContent).toBe(
          TEXT[lang].rules.sizeRequired,
        ),
      );
      expect(ui.api.sent('POST', ENDPOINT.original)).toHaveLength(0);
    } finally {
      ui.close();
    }
  });

  it.each(['ru', 'en'] as const)('[%s] Regenerate goes to /dashboard carrying the prompt (SPEC 2)', async (lang) => {
    const text = TEXT[lang];
    const ui = await openAt('/dashboard', lang);
    try {
      await ui.user.click(await screen.findByLabelText(text.open('A bowl of ramen')));
      const dialog = await screen.findByTestId('image-modal');
      await ui.user.click(within(dialog).getByText(text.regenerate));
      await waitFor(() => expect(modal()).toBeNull());
      expect(new URL(ui.location(), 'http://localhost').pathname).toBe('/dashboard');
      expect(new URL(ui.location(), 'http://localhost').searchParams.get('prompt')).toBe('A bowl of ramen');
      await waitFor(() => expect(byId<HTMLTextAreaElement>('prompt').value).toBe('A bowl of ramen'));
      expect(submit().disabled).toBe(false);
    } finally {
      ui.close();
    }
  });
});

describe('generation: the rules and the loader, on the machine itself', () => {
  /** The chart with test answers; given a `session`, it keeps its own balance watcher on it. */
  const start = ({
    generate = () => new Promise<GenerationReply>(() => {}),
    keepDraft = () => {},
    recent = async () => [],
    session,
    balance = 1,
  }: {
    generate?: () => Promise<GenerationReply>;
    keepDraft?: (text: string) => void;
    recent?: () => Promise<ImageRecord[]>;
    session?: GenerationInputs['session'];
    balance?: number;
  } = {}) =>
    createActor(
      generationMachine.provide({
        actors: {
          generate: fromPromise<GenerationReply, GenerateRequest>(generate),
          loadRecent: fromPromise<ImageRecord[], { limit: number }>(recent),
          ...(session ? {} : { watchBalance: fromCallback(() => () => {}) }),
          ticker: fromCallback(() => () => {}),
        },
        actions: { keepDraft: (_, params: { text: string }) => keepDraft(params.text) },
      }),
      { input: { ...input, ...(session ? { session } : {}), balance } },
    ).start();
  const form = (actor: ReturnType<typeof start>) => actor.getSnapshot().context.form;

  it('issue #26: each change of the form hands on the prompt as it now is, to be kept if the session ends', () => {
    const kept: string[] = [];
    const actor = start({ keepDraft: (text) => kept.push(text) });
    actor.send({ type: 'FIELD.CHANGE', field: 'prompt', value: 'A red fox' });
    actor.send({ type: 'FIELD.CHANGE', field: 'negativePrompt', value: 'blur' });
    actor.send({ type: 'TEMPLATE.APPLY', prompt: 'A mountain lake' });
    actor.send({ type: 'PROMPT.SET', prompt: 'A hill at dawn' });
    actor.send({ type: 'FORM.PRESET', values: { prompt: 'A bowl of ramen', model: 'core' } });
    expect(kept).toEqual(['A red fox', 'A red fox', 'A mountain lake', 'A hill at dawn', 'A bowl of ramen']);
    actor.stop();
  });

  it('SPEC 2 Regenerate: its parameters fill only the fields they name; while generating nothing changes the form', () => {
    const actor = start();
    actor.send({ type: 'BALANCE.SYNC', balance: 50 });
    actor.send({ type: 'FIELD.CHANGE', field: 'prompt', value: 'A red fox' });
    actor.send({ type: 'FIELD.CHANGE', field: 'seed', value: '7' });
    actor.send({ type: 'FORM.PRESET', values: { model: 'sd3', sd3Model: 'sd3.5-large' } });
    expect(form(actor)).toMatchObject({ model: 'sd3', sd3Model: 'sd3.5-large', prompt: 'A red fox', seed: '7' });
    actor.send({ type: 'SUBMIT' });
    expect(actor.getSnapshot().matches({ generator: 'generating' })).toBe(true);
    const before = form(actor);
    actor.send({ type: 'FORM.PRESET', values: { prompt: 'Another', model: 'core' } });
    actor.send({ type: 'FIELD.CHANGE', field: 'prompt', value: 'Typed' });
    actor.send({ type: 'TEMPLATE.APPLY', prompt: 'A template' });
    actor.send({ type: 'PROMPT.SET', prompt: 'Set' });
    expect(form(actor)).toEqual(before);
    actor.stop();
  });

  it('SPEC 2 Regenerate: the address gives the form the parameters it holds, and a model only from the catalogue', () => {
    // Strict: a parameter the address lacks is not in the preset at all (an undefined would blank the field).
    expect(formPreset({})).toStrictEqual({});
    expect(
      formPreset({
        model: 'core',
        size: '1024x1024',
        aspectRatio: '16:9',
        stylePreset: 'anime',
        negativePrompt: 'blur',
        variant: 'sd3.5-large',
        seed: '42',
      }),
    ).toEqual({
      model: 'core',
      size: '1024x1024',
      aspectRatio: '16:9',
      stylePreset: 'anime',
      negativePrompt: 'blur',
      sd3Model: 'sd3.5-large',
      seed: '42',
    });
    expect(formPreset({ model: 'dall-e-3', negativePrompt: '', seed: '' })).toStrictEqual({
      negativePrompt: '',
      seed: '',
    });
  });

  it('SPEC 5 and 9: the balance is short of a model below its cost (original 2, ultra 16, core 6, sd3 12), not at it', () => {
    for (const [model, cost] of Object.entries(COST)) {
      const at = (balance: number) => balanceShort({ form: { ...initialForm('A red fox'), model }, balance });
      expect([at(0), at(cost - 1), at(cost), at(cost + 1)]).toEqual([true, true, false, false]);
    }
    // A model the catalogue does not have is refused by its own rule, not as a short balance.
    expect(balanceShort({ form: { ...initialForm('A red fox'), model: 'gpt-image' }, balance: 0 })).toBe(false);
  });

  it('SPEC 2: the preview holds the latest 6 images, newest first, each once; Show All reads them again', async () => {
    let reads = 0;
    const listed = [1, 2, 3, 4, 5, 6, 7].map((id) => image(id, `Listed ${id}`));
    const replies = [SUCCESS.original, { ...SUCCESS.original, data: listed[0]! }];
    const actor = start({
      generate: async () => replies.shift()!,
      recent: async () => {
        reads += 1;
        return listed;
      },
    });
    const ids = () => actor.getSnapshot().context.recent.map((i) => i.id);
    await settled(actor, (s) => s.matches({ recent: 'ready' }));
    expect(ids()).toEqual([1, 2, 3, 4, 5, 6]);
    actor.send({ type: 'BALANCE.SYNC', balance: 50 });
    actor.send({ type: 'FIELD.CHANGE', field: 'prompt', value: 'A red fox' });
    actor.send({ type: 'SUBMIT' });
    await settled(actor, (s) => s.matches({ generator: 'result' }));
    expect(ids()).toEqual([101, 1, 2, 3, 4, 5]);
    actor.send({ type: 'SUBMIT' });
    await settled(actor, (s) => s.matches({ generator: 'result' }) && s.context.current?.id === 1);
    expect(ids()).toEqual([1, 101, 2, 3, 4, 5]);
    actor.send({ type: 'RECENT.RELOAD' });
    await settled(actor, (s) => s.matches({ recent: 'ready' }));
    expect(reads).toBe(2);
    actor.stop();
  });

  it('SPEC 2 Use Last Seed: nothing before a seed is known, then the last image’s seed, kept past one without', async () => {
    const replies = [SUCCESS.original, { ...SUCCESS.original, data: image(104, 'No seed', { seed: null }) }];
    const actor = start({ generate: async () => replies.shift()! });
    actor.send({ type: 'BALANCE.SYNC', balance: 50 });
    actor.send({ type: 'FIELD.CHANGE', field: 'seed', value: '5' });
    actor.send({ type: 'SEED.USE_LAST' });
    expect(form(actor).seed).toBe('5');
    actor.send({ type: 'FIELD.CHANGE', field: 'prompt', value: 'A red fox' });
    actor.send({ type: 'SUBMIT' });
    await settled(actor, (s) => s.matches({ generator: 'result' }));
    actor.send({ type: 'SUBMIT' });
    await settled(actor, (s) => s.matches({ generator: 'result' }) && s.context.current?.id === 104);
    actor.send({ type: 'SEED.USE_LAST' });
    expect(form(actor).seed).toBe('77');
    actor.stop();
  });

  it('SPEC 2 image modal: opening another image shows that one; closing leaves none selected', () => {
    const actor = start();
    const [a, b] = [image(1, 'First'), image(2, 'Second')];
    actor.send({ type: 'IMAGE.OPEN', image: a });
    actor.send({ type: 'IMAGE.OPEN', image: b });
    expect(actor.getSnapshot().context.selected?.id).toBe(2);
    actor.send({ type: 'IMAGE.CLOSE' });
    expect(actor.getSnapshot().matches({ modal: 'closed' })).toBe(true);
    expect(actor.getSnapshot().context.selected).toBeNull();
    actor.stop();
  });

  it('SPEC 7: the form follows the balance the header shows, once there is a user to read it from', () => {
    const header = createActor(
      createMachine({
        types: {} as { context: { user: { tokensAmount: number } | null }; events: { type: 'SET'; amount: number } },
        context: { user: null },
        on: { SET: { actions: assign({ user: ({ event }) => ({ tokensAmount: event.amount }) }) } },
      }),
    ).start();
    // The header's session, reduced to the user it holds.
    const actor = start({ session: header as unknown as GenerationInputs['session'], balance: 9 });
    expect(actor.getSnapshot().context.balance).toBe(9);
    header.send({ type: 'SET', amount: 40 });
    expect(actor.getSnapshot().context.balance).toBe(40);
    header.send({ type: 'SET', amount: 3 });
    expect(actor.getSnapshot().context.balance).toBe(3);
    actor.stop();
    header.stop();
  });

  it('SPEC 5: every rule in order, the first failing one shown, with the texts of SPEC', () => {
    const actor = start();
    const set = (field: string, value: string) => actor.send({ type: 'FIELD.CHANGE', field: field as never, value });
    const submitted = () => {
      actor.send({ type: 'SUBMIT' });
      return actor.getSnapshot().context.error?.message;
    };
    const en = TEXT.en.rules;
    set('model', 'sd3');
    set('aspectRatio', '');
    set('sd3Model', '');
    set('seed', '-1');
    set('negativePrompt', 'n'.repeat(2001));
    set('prompt', '  \n ');
    expect(submitted()).toBe(en.promptRequired);
    set('prompt', 'p'.repeat(2001));
    expect(submitted()).toBe(en.promptTooLong);
    set('prompt', 'p'.repeat(2000));
    expect(submitted()).toBe(en.negativeTooLong);
    set('negativePrompt', 'n'.repeat(2000));
    expect(submitted()).toBe(en.seedInvalid);
    set('seed', '4294967296');
    expect(submitted()).toBe(en.seedInvalid);
    set('seed', '12.5');
    expect(submitted()).toBe(en.seedInvalid);
    set('seed', '4294967295');
    expect(submitted()).toBe(TEXT.en.insufficient(12, 1));
    actor.send({ type: 'BALANCE.SYNC', balance: 12 });
    expect(submitted()).toBe(en.aspectRequired);
    set('aspectRatio', '9:21');
    expect(submitted()).toBe(en.variantRequired);
    set('model', 'original');
    set('size', '');
    expect(submitted()).toBe(en.sizeRequired);
    // SPEC section 8: "Unknown model: {model}".
    set('model', 'gpt-image');
    expect(submitted()).toBe('Unknown model: gpt-image');
    set('model', 'sd3');
    set('sd3Model', 'sd3.5-medium');
    actor.send({ type: 'SUBMIT' });
    expect(actor.getSnapshot().matches({ generator: 'generating' })).toBe(true);
    actor.stop();
  });

  it('SPEC 2: the bar creeps but never reaches 100 until the image is there', async () => {
    let finish!: (reply: GenerationReply) => void;
    const actor = start({ generate: () => new Promise<GenerationReply>((resolve) => (finish = resolve)) });
    actor.send({ type: 'BALANCE.SYNC', balance: 50 });
    actor.send({ type: 'FIELD.CHANGE', field: 'prompt', value: 'A red fox' });
    actor.send({ type: 'SUBMIT' });
    const seen: number[] = [];
    for (let i = 0; i < 500; i += 1) {
      actor.send({ type: 'TICK' });
      seen.push(actor.getSnapshot().context.progress);
    }
    expect(Math.max(...seen)).toBeLessThan(100);
    expect(seen.at(-1)!).toBeGreaterThan(seen[0]!);
    expect(TEXT.en.phrases[actor.getSnapshot().context.phrase]).toBeDefined();
    finish(SUCCESS.original);
    await settled(actor, (s) => s.matches({ generator: 'result' }));
    expect(actor.getSnapshot().context.progress).toBe(100);
    actor.stop();
  });

  it('SPEC 8: a failure that says nothing at all reads "Generation failed. Please try again."', async () => {
    const actor = start({ generate: () => Promise.reject(new Error('')) });
    actor.send({ type: 'BALANCE.SYNC', balance: 50 });
    actor.send({ type: 'FIELD.CHANGE', field: 'prompt', value: 'A red fox' });
    actor.send({ type: 'SUBMIT' });
    await settled(actor, (s) => s.matches({ generator: 'error' }));
    expect(actor.getSnapshot().context.error?.message).toBe(TEXT.en.fallback);
    actor.stop();
  });
});
