// One file: one chart's walk: its table of what each state shows (SPEC) and the steps that drive it
// read side by side.
import { screen, waitFor, within } from '@testing-library/react';
import { expect } from 'vitest';
import { createActor, createMachine, type AnyEventObject, type AnyMachineSnapshot } from 'xstate';
import { ApiError } from '../../src/api/client';
import { portraitMachine, type PortraitContext, type PortraitInputs } from '../../src/machines/portrait';
import type { Language } from '../../src/i18n';
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
 * The portrait creator (SPEC sections 2, 4, 5, 7, 8) walked along its statechart on the
 * real screen at /portrait-creator. What is expected comes from SPEC and is written here;
 * the Russian wording is the product's, written out by hand so a change of it is seen.
 */

const ENDPOINT = '/api/face-swap/generate';
const START_BALANCE = 50;

/** SPEC section 7: success, data (id, url, prompt), tokens.charged, message; balanceAfter is ours. */
const SUCCESS = {
  success: true,
  data: { id: 7, url: 'http://localhost/images/abcdef0123456789abcdef0123456789.webp', prompt: 'A knight' },
  tokens: { charged: 12 },
  balanceAfter: 38,
  message: 'Portrait generated successfully',
} as const;
const FAILED = apiError(502, 'PROVIDER_ERROR', 'Face-swap generation failed');
/** A refusal states the balance (DESIGN section 5: details carry it after a refused charge). */
const REFUSED = apiError(
  402,
  'INSUFFICIENT_TOKENS',
  'Insufficient tokens. You need 12 tokens for portrait generation.',
  {
    cost: 12,
    balance: 5,
  },
);

/** Issue #28: one job too many at once: refused before any charge, the limit named. */
const TOO_MANY = apiError(429, 'TOO_MANY_JOBS', 'Too many jobs in progress. Wait for one to finish or cancel one', {
  limit: 4,
});

const apiErrorOf = (reply: Reply) => {
  const body = reply.body as { code: string; message: string };
  return new ApiError(body.message, reply.status ?? 500, body.code, body);
};

const plural = (lang: Language, n: number, forms: Record<string, string>) =>
  forms[new Intl.PluralRules(lang).select(n)] ?? forms.other!;

const TEXT = {
  en: {
    photoRequired: 'Please upload a photo first',
    promptRequired: 'Please enter a prompt',
    insufficient: 'Insufficient tokens. You need 12 tokens for portrait generation.',
    tooLarge: (mb: string) => `File size must be less than 10MB. Current size: ${mb} MB`,
    badType: 'Only JPG, PNG, and WebP formats are supported',
    failed: 'Face-swap generation failed',
    generate: 'Generate Portrait',
    generating: 'Creating your portrait…',
    showcase: 'Examples',
    result: 'Result',
    balance: (n: number) => `Your balance: ${n} ${n === 1 ? 'token' : 'tokens'}`,
    header: (n: number) => `${n} ${n === 1 ? 'token' : 'tokens'}`,
    cost: 'Cost: 12 tokens',
    knight: 'A man in medieval armour, a castle behind him, cinematic lighting',
    winter: 'A woman in a winter forest, a wool scarf, falling snow, cool tones',
    runInBackground: 'Run in background',
    tooMany: 'You have reached the limit of 4 jobs at once. Wait for one to finish or cancel one',
  },
  ru: {
    photoRequired: 'Сначала загрузите фото',
    promptRequired: 'Введите промпт для портрета',
    insufficient: 'Недостаточно токенов. Для создания портрета нужно 12 токенов.',
    tooLarge: (mb: string) => `Размер файла должен быть меньше 10 МБ. Текущий размер: ${mb} МБ`,
    badType: 'Поддерживаются только форматы JPG, PNG и WebP',
    failed: 'Не удалось создать портрет',
    generate: 'Создать портрет',
    generating: 'Создаём портрет…',
    showcase: 'Примеры',
    result: 'Результат',
    balance: (n: number) => `Ваш баланс: ${n} ${plural('ru', n, { one: 'токен', few: 'токена', other: 'токенов' })}`,
    header: (n: number) => `${n} ${plural('ru', n, { one: 'токен', few: 'токена', other: 'токенов' })}`,
    cost: 'Стоимость: 12 токенов',
    knight: 'A man in medieval armour, a castle behind him, cinematic lighting',
    winter: 'A woman in a winter forest, a wool scarf, falling snow, cool tones',
    runInBackground: 'Продолжить в фоне',
    tooMany: 'Достигнут предел одновременных заданий: 4. Дождитесь окончания одного из них или отмените его',
  },
};

interface PhotoSample {
  name: string;
  bytes: number;
  type: string;
}
const PHOTOS: PhotoSample[] = [
  { name: 'me.jpg', bytes: 120_000, type: 'image/jpeg' },
  // SPEC section 5: over 10MB is rejected with the size in MB, two decimals (11.00).
  { name: 'huge.png', bytes: 11 * 1024 * 1024, type: 'image/png' },
  { name: 'anim.gif', bytes: 1000, type: 'image/gif' },
];
const acceptable = (p: PhotoSample) => p.bytes <= 10 * 1024 * 1024 && p.type !== 'image/gif';

/**
 * What the user has done, as SPEC says it counts: the oracle the rows read. Edits while a
 * portrait is being made are not possible (SPEC section 4: the form is disabled).
 */
interface Facts {
  photo: PhotoSample | null;
  /** The last file refused as it was chosen. */
  refused: PhotoSample | null;
  tab: 'male' | 'female';
  prompt: string;
  aspect: string;
  balance: number;
  generating: boolean;
  result: boolean;
  error: string | null;
}

function factsOf(events: readonly AnyEventObject[], lang: Language): Facts {
  const f: Facts = {
    photo: null,
    refused: null,
    tab: 'female',
    prompt: '',
    aspect: '1:1',
    balance: START_BALANCE,
    generating: false,
    result: false,
    error: null,
  };
  for (const event of events) {
    const answered = event.type.startsWith('xstate.done.') || event.type.startsWith('xstate.error.');
    // Issue #28: Run in background frees the form (photo and prompt kept); the job goes on.
    if (f.generating && event.type === 'RUN_IN_BACKGROUND') {
      f.generating = false;
      continue;
    }
    if (f.generating && !answered) continue;
    switch (event.type) {
      case 'PHOTO.CHOOSE': {
        const sample = PHOTOS.find((p) => p.name === (event as unknown as { photo: { name: string } }).photo.name)!;
        if (acceptable(sample)) {
          f.photo = sample;
          f.error = null;
        } else {
          f.refused = sample;
          f.error =
            sample.type === 'image/gif' ? TEXT[lang].badType : TEXT[lang].tooLarge(lang === 'ru' ? '11,00' : '11.00');
        }
        break;
      }
      case 'PHOTO.CLEAR':
        f.photo = null;
        f.error = null;
        break;
      case 'TAB.SELECT':
        f.tab = (event as unknown as { tab: 'male' | 'female' }).tab;
        break;
      case 'TEMPLATE.APPLY':
        f.prompt = f.tab === 'male' ? TEXT[lang].knight : TEXT[lang].winter;
        break;
      case 'PROMPT.CHANGE':
        f.prompt = (event as unknown as { value: string }).value;
        break;
      case 'ASPECT.CHANGE':
        f.aspect = (event as unknown as { value: string }).value;
        break;
      case 'SUBMIT':
        // SPEC section 5, in order: photo, prompt, balance.
        if (!f.photo) f.error = TEXT[lang].photoRequired;
        else if (!f.prompt.trim()) f.error = TEXT[lang].promptRequired;
        else if (f.balance < 12) f.error = TEXT[lang].insufficient;
        else {
          f.generating = true;
          f.error = null;
        }
        break;
      default:
        if (event.type.startsWith('xstate.done.')) {
          f.generating = false;
          f.result = true;
          f.balance = SUCCESS.balanceAfter;
        } else if (event.type.startsWith('xstate.error.')) {
          f.generating = false;
          const reply = replyOf<Reply>(event);
          const body = reply.body as { code: string; details?: { balance?: number } };
          f.error =
            body.code === 'INSUFFICIENT_TOKENS'
              ? TEXT[lang].insufficient
              : body.code === 'TOO_MANY_JOBS'
                ? TEXT[lang].tooMany
                : TEXT[lang].failed;
          if (body.details?.balance !== undefined) f.balance = body.details.balance;
        }
    }
  }
  return f;
}

/** Disabled itself or by its fieldset, as the browser decides it. */
const disabled = (element: Element) => element.matches(':disabled');
const form = () => screen.getByTestId('portrait-form');
const prompt = () => screen.getByRole<HTMLTextAreaElement>('textbox', { name: /description|промпт/i });
const submit = () => screen.getByTestId<HTMLButtonElement>('generate-portrait');

/** What SPEC shows on the form whatever the state. */
/**
 * Issue #26 item 8: one rule for templates on both screens, said next to them: they fill in
 * an English prompt (in Russian too), as the models understand English best.
 */
const TEMPLATES_NOTE: Record<Language, string> = {
  en: 'Templates fill in an English prompt: the models understand English best.',
  ru: 'Шаблоны вставляют промпт на английском: модели лучше всего понимают английский.',
};

function formShows(ui: OpenApp, reached: Reached) {
  const f = factsOf(reached.events, reached.lang);
  const text = TEXT[reached.lang];
  expect(ui.location()).toBe('/portrait-creator');
  expect(screen.getByTestId('token-balance').textContent).toBe(text.header(f.balance));
  expect(screen.getByTestId('portrait-balance').textContent).toBe(text.balance(f.balance));
  expect(screen.getByTestId('portrait-cost').textContent).toBe(text.cost);
  expect(prompt().value).toBe(f.prompt);
  expect(screen.getByTestId<HTMLInputElement>(`aspect-${f.aspect}`).checked).toBe(true);
  expect(screen.getByTestId(`tab-${f.tab}`).getAttribute('aria-selected')).toBe('true');
  expect(screen.getByTestId('templates-note').textContent).toBe(TEMPLATES_NOTE[reached.lang]);
  // The preview shows the file name and size (SPEC section 2).
  if (f.photo) {
    expect(screen.getByTestId('photo-name').textContent).toBe(f.photo.name);
  } else {
    expect(screen.queryByTestId('photo-preview')).toBeNull();
  }
  const alert = screen.queryByTestId('portrait-error');
  expect(alert?.textContent ?? null).toBe(f.error);
}

function idle(ui: OpenApp, reached: Reached) {
  formShows(ui, reached);
  expect(submit().disabled).toBe(false);
  expect(submit().textContent).toBe(TEXT[reached.lang].generate);
  expect(disabled(prompt())).toBe(false);
}

function showcaseOrResult(reached: Reached) {
  const f = factsOf(reached.events, reached.lang);
  const panel = screen.getByTestId('portrait-result-panel');
  if (f.result) {
    expect(within(panel).getByRole('heading').textContent).toBe(TEXT[reached.lang].result);
    expect(within(panel).getByTestId('portrait-result-prompt').textContent).toBe(SUCCESS.data.prompt);
    expect(within(panel).getByRole('img').getAttribute('src')).toBe(SUCCESS.data.url);
  } else {
    // SPEC section 2: before anything is generated, two before/after sample pairs.
    expect(within(panel).getByRole('heading').textContent).toBe(TEXT[reached.lang].showcase);
    expect(within(panel).getAllByRole('group')).toHaveLength(2);
  }
}

function fileOf(sample: PhotoSample): File {
  return new File([new Uint8Array(sample.bytes)], sample.name, { type: sample.type });
}

const session = createActor(createMachine({})).start();
const input = { session, balance: START_BALANCE } as unknown as PortraitInputs;

export const model: ScreenModel<OpenApp> = {
  machine: portraitMachine,
  input,
  events: (snapshot: AnyMachineSnapshot) => {
    const context = snapshot.context as PortraitContext;
    return [
      ...PHOTOS.map((p) => ({
        type: 'PHOTO.CHOOSE' as const,
        photo: { name: p.name, size: p.bytes, type: p.type, file: null, previewUrl: `blob:${p.name}` },
      })),
      ...(context.photo ? [{ type: 'PHOTO.CLEAR' as const }] : []),
      { type: 'TAB.SELECT' as const, tab: context.tab === 'male' ? ('female' as const) : ('male' as const) },
      { type: 'TEMPLATE.APPLY' as const, prompt: 'template' },
      { type: 'PROMPT.CHANGE' as const, value: '  ' },
      { type: 'ASPECT.CHANGE' as const, value: context.aspectRatio === '4:5' ? '16:9' : '4:5' },
      { type: 'SUBMIT' as const },
      // The result (and its Download) is on screen unless a new portrait is being made.
      ...(context.result && !snapshot.matches('generating')
        ? [{ type: 'DOWNLOAD' as const, image: context.result }]
        : []),
      ...answers(snapshot, 'createPortrait', { output: SUCCESS }, json(SUCCESS)),
      ...answers(snapshot, 'createPortrait', { error: apiErrorOf(FAILED) }, FAILED),
      ...answers(snapshot, 'createPortrait', { error: apiErrorOf(REFUSED) }, REFUSED),
      ...answers(snapshot, 'createPortrait', { error: apiErrorOf(TOO_MANY) }, TOO_MANY),
      ...(snapshot.matches('generating') ? [{ type: 'RUN_IN_BACKGROUND' as const }] : []),
    ];
  },
  serializeState: (snapshot: AnyMachineSnapshot) => {
    const c = snapshot.context as PortraitContext;
    return JSON.stringify([
      snapshot.value,
      c.photo?.name ?? null,
      c.prompt.trim() === '' ? 'blank' : 'text',
      c.tab,
      c.balance >= 12,
      c.result !== null,
      c.error?.code ?? null,
    ]);
  },
  // SPEC section 5 words each refusal: every message is a transition of its own.
  edgeKey: (before: AnyMachineSnapshot, event: AnyEventObject, after: AnyMachineSnapshot) =>
    JSON.stringify([
      before.value,
      event.type.replace(/^(xstate\.(done|error)\.actor)\..*$/, '$1'),
      after.value,
      (after.context as PortraitContext).error?.code ?? null,
    ]),
  open: (lang: Language) => openApp('/portrait-creator', { lang, api: new FakeApi().hold('POST', ENDPOINT) }),
  close: (ui: OpenApp) => ui.close(),
  async perform(ui: OpenApp, event: AnyEventObject, before: AnyMachineSnapshot) {
    const { user, api } = ui;
    const busy = before.matches('generating');
    switch (event.type) {
      case 'PHOTO.CHOOSE': {
        const sample = PHOTOS.find((p) => p.name === (event as unknown as { photo: { name: string } }).photo.name)!;
        const picker = screen.getByTestId<HTMLInputElement>('photo-input');
        if (busy) return expect(disabled(picker)).toBe(true);
        return user.upload(picker, fileOf(sample));
      }
      case 'PHOTO.CLEAR':
        return user.click(within(form()).getByRole('button', { name: /Remove photo|Убрать фото/ }));
      case 'TAB.SELECT':
        return user.click(screen.getByTestId(`tab-${(event as unknown as { tab: string }).tab}`));
      case 'TEMPLATE.APPLY': {
        const tab = (before.context as PortraitContext).tab;
        return user.click(screen.getByTestId(tab === 'male' ? 'template-male-knight' : 'template-female-winter'));
      }
      case 'PROMPT.CHANGE':
        if (busy) return expect(disabled(prompt())).toBe(true);
        await user.clear(prompt());
        return user.type(prompt(), (event as unknown as { value: string }).value);
      case 'ASPECT.CHANGE':
        return user.click(screen.getByTestId(`aspect-${(event as unknown as { value: string }).value}`));
      case 'SUBMIT':
        if (busy) return expect(submit().disabled).toBe(true);
        return user.click(submit());
      case 'RUN_IN_BACKGROUND': {
        // Issue #28: the waiting request is let go (the server's job goes on) and the queue
        // reads its list again.
        const listed = api.sent('GET', '/api/jobs').length;
        const waiting = api.sent('POST', ENDPOINT).at(-1)!;
        await user.click(screen.getByRole('button', { name: TEXT[ui.lang].runInBackground }));
        expect(waiting.signal?.aborted, 'the waiting request aborted').toBe(true);
        await waitFor(() => expect(api.sent('GET', '/api/jobs').length).toBeGreaterThan(listed));
        return;
      }
      case 'DOWNLOAD':
        api.on('GET', /^\/images\//, { status: 200, body: 'webp bytes' });
        await user.click(screen.getByRole('button', { name: /^(Download|Скачать)$/ }));
        // SPEC section 7: saved as imagegen_{id}_{fileName}.jpg.
        return void (await expect
          .poll(() => ui.downloads)
          .toContain('imagegen_7_abcdef0123456789abcdef0123456789.webp.jpg'));
      default: {
        const reply = replyOf<Reply>(event);
        await api.answer('POST', ENDPOINT, reply);
        return;
      }
    }
  },
  sees: [
    [
      'generating',
      {
        says: 'SPEC 4/5: while generating the form is disabled and the button says so; the header keeps the balance',
        check: (ui: OpenApp, reached: Reached) => {
          formShows(ui, reached);
          expect(submit().disabled).toBe(true);
          expect(submit().textContent).toBe(TEXT[reached.lang].generating);
          expect(disabled(prompt())).toBe(true);
          expect(screen.getByTestId('portrait-generating')).toBeTruthy();
          // Issue #28: the loader offers Run in background.
          expect(screen.getByTestId('run-in-background').textContent).toBe(TEXT[reached.lang].runInBackground);
          // SPEC section 7: prompt, the photo as user_image_file, aspect_ratio; the screen
          // fixes style_preset to photographic and output_format to webp.
          const sent = ui.api.sent('POST', ENDPOINT).at(-1)!.body as FormData;
          const f = factsOf(reached.events, reached.lang);
          expect(sent.get('prompt')).toBe(f.prompt);
          expect((sent.get('user_image_file') as File).name).toBe(f.photo?.name);
          expect(sent.get('aspect_ratio')).toBe(f.aspect);
          expect(sent.get('style_preset')).toBe('photographic');
          expect(sent.get('output_format')).toBe('webp');
        },
      },
    ],
    [
      { editable: 'result' },
      {
        says: 'SPEC 2: the portrait with its prompt, Download; the balance drops by the charge',
        check: (ui: OpenApp, reached: Reached) => {
          idle(ui, reached);
          showcaseOrResult(reached);
        },
      },
    ],
    [
      { editable: 'error' },
      {
        says: 'SPEC 5/8: the first failing rule, or the server’s failure, under the form; the form stays usable',
        check: (ui: OpenApp, reached: Reached) => {
          idle(ui, reached);
          expect(screen.getByRole('alert').textContent).toBe(factsOf(reached.events, reached.lang).error);
          showcaseOrResult(reached);
        },
      },
    ],
    [
      { editable: 'photoChosen' },
      {
        says: 'SPEC 2: the preview with file name and size',
        check: (ui: OpenApp, reached: Reached) => {
          idle(ui, reached);
          expect(screen.getByTestId('photo-preview')).toBeTruthy();
          showcaseOrResult(reached);
        },
      },
    ],
    [
      { editable: 'noPhoto' },
      {
        says: 'SPEC 2: the upload zone (drag-and-drop or click), no preview',
        check: (ui: OpenApp, reached: Reached) => {
          idle(ui, reached);
          expect(screen.queryByTestId('photo-preview')).toBeNull();
          showcaseOrResult(reached);
        },
      },
    ],
  ],
};

describeScreenModel('portrait creator', model);

describeInvariants('portrait', model, [
  {
    name: 'nothing the user does while a portrait is made changes the request (the form is disabled)',
    step: (before, event, after) =>
      !before.matches('generating') ||
      event.type.startsWith('xstate.') ||
      JSON.stringify(before.context) === JSON.stringify(after.context),
  },
  {
    name: 'a portrait is requested only with a photo, a prompt and 12 tokens',
    step: (before, _event, after) => {
      if (before.matches('generating') || !after.matches('generating')) return true;
      const c = after.context as PortraitContext;
      return c.photo !== null && c.prompt.trim() !== '' && c.balance >= 12;
    },
  },
  {
    name: 'the balance is never negative',
    state: (snapshot) => (snapshot.context as PortraitContext).balance >= 0,
  },
]);
