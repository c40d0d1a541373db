import { screen } from '@testing-library/react';
import type { AnyEventObject, AnyMachineSnapshot } from 'xstate';
import { ApiError } from '../../../src/api/client';
import type { Plan } from '../../../src/domain/billing';
import type { Language } from '../../../src/i18n';
import { openApp, signedInUser, type OpenApp } from './app';
import { apiError, FakeApi, json, type Reply } from './fake-api';
import { answers } from './model';

/*
 * Replies of our API that several screen suites share, and the few helpers around them that
 * the suites would otherwise each write again: the chat's model list and page, the balance
 * GET /auth/me states, the error a reply makes, the plural forms the expected texts use.
 */

// ---------------------------------------------------------------------------------------
// Any screen.

/** The plural form of `n` in a language, from the forms given (the expected texts are written by hand). */
export const plural = (lang: Language, n: number, forms: Record<string, string>) =>
  forms[new Intl.PluralRules(lang).select(n)] ?? forms.other!;

/** A proxy's 502 with no body of ours: the operation's own SPEC 8 text is shown. */
export const BROKEN: Reply = { status: 502 };
export const NOT_FOUND = apiError(404, 'NOT_FOUND', 'Resource not found');

/** The pagination of an empty list (the images, the payment history, the ledger). */
export const NO_PAGES = { currentPage: 1, totalPages: 0, total: 0, hasNext: false, hasPrev: false };

/** The error the real API client makes of a reply (our error body, or a bare status). */
export const errorOfReply = (reply: Reply) => {
  const body = reply.body as { code?: string; message?: string } | undefined;
  return new ApiError(body?.message ?? 'Bad Gateway', reply.status ?? 500, body?.code, body);
};

/**
 * The server's answers to the actors of a state with one source, marked with that source (a
 * suite's rows tell them apart), and reading the source back from an event: `Src` is the
 * suite's own list of the chart's actor sources.
 */
export function bySource<Src extends string>() {
  return {
    answered: (
      snapshot: AnyMachineSnapshot,
      src: Src,
      outcome: { output: unknown } | { error: unknown },
      reply: Reply | null,
      extra: Record<string, unknown> = {},
    ) => answers(snapshot, src, outcome, reply).map((event) => ({ ...event, src, ...extra })),
    srcOf: (event: AnyEventObject) => (event as { src?: Src }).src,
  };
}

/**
 * GET /auth/me answering with the balance our server holds while a path runs: the screen
 * object given to `carry` reads it and moves it (as the server charges) as `serverBalance`.
 */
export function authMeBalance(api: FakeApi, start: number) {
  const state = { serverBalance: start };
  api.on('GET', '/auth/me', () => json({ success: true, data: signedInUser({ tokensAmount: state.serverBalance }) }));
  return {
    carry<T extends { serverBalance: number }>(ui: T): T {
      Object.defineProperty(ui, 'serverBalance', {
        get: () => state.serverBalance,
        set: (value: number) => (state.serverBalance = value),
      });
      return ui;
    },
  };
}

// ---------------------------------------------------------------------------------------
// The chat (SPEC section 2 "Chat").

/** Where the browser remembers the chosen model (src/api/chat.ts). */
export const MODEL_KEY = 'chatModel';

/** GPT-4o as GET /llm/models lists it (SPEC section 7): its id, name, costs per 1M tokens. */
export const GPT_4O = {
  id: 'gpt-4o',
  name: 'GPT-4o',
  description: 'The most capable model',
  maxTokens: 128000,
  inputCostPer1M: 250,
  outputCostPer1M: 1000,
  isStreamingAllowed: true,
};

/** GET /llm/models (SPEC section 7). */
export const MODELS = {
  success: true,
  data: {
    models: { 'gpt-4o': GPT_4O },
    default: 'gpt-4o',
  },
};

/** Our API for the chat page with a model list (MODELS unless said) and no conversations yet. */
export const chatApi = (models: Reply = json(MODELS)) =>
  new FakeApi().on('GET', '/llm/models', models).on('GET', '/llm/conversations', json({ success: true, data: [] }));

/** The app at /chat, once the chat screen's code is in (its first opening compiles it). */
export async function openChat(lang: Language, api: FakeApi): Promise<OpenApp> {
  const ui = await openApp('/chat', { lang, api });
  await screen.findByTestId('chat-title', {}, { timeout: 15_000 });
  return ui;
}

/**
 * jsdom lays nothing out: `scrollIntoView` (the message list's scrolling, SPEC 2) does
 * nothing, or gives what it was asked to `record`.
 */
export function stubScrollIntoView(record?: (options?: boolean | ScrollIntoViewOptions) => void): void {
  Element.prototype.scrollIntoView = function scrollIntoView(options?: boolean | ScrollIntoViewOptions) {
    record?.(options);
  };
}

/** The chat's message input. */
export const input = () => screen.getByTestId<HTMLTextAreaElement>('chat-input');
/** The texts of the error notifications on screen. */
export const toastTexts = () => [...document.querySelectorAll('[data-kind="error"]')].map((t) => t.textContent);

/** The bubbles in order: role and text (the user's plain text, the assistant's rendered markdown). */
export function bubbles() {
  return [
    ...document.querySelectorAll<HTMLElement>('[data-testid="message-user"], [data-testid="message-assistant"]'),
  ].map((el) =>
    el.dataset.testid === 'message-user'
      ? { role: 'user', text: el.querySelector('p')?.textContent, el }
      : { role: 'assistant', text: el.querySelector('[data-testid="assistant-markdown"]')?.textContent, el },
  );
}

// ---------------------------------------------------------------------------------------
// Billing.

/** SPEC section 9's plans as GET /api/payments/plans carries them. */
export const PLANS: Plan[] = [
  {
    id: 'starter',
    name: 'Starter',
    priceRub: null,
    priceKopecks: null,
    tokensPerMonth: 0,
    signupTokens: 50,
    trialDays: 0,
    rollover: false,
    pricePerTokenRub: null,
    features: ['signupTokens', 'history7Days'],
  },
  {
    id: 'pro',
    name: 'Pro',
    priceRub: 700,
    priceKopecks: 70000,
    tokensPerMonth: 1000,
    signupTokens: 0,
    trialDays: 7,
    rollover: false,
    pricePerTokenRub: null,
    features: ['monthlyTokens', 'trial'],
  },
  {
    id: 'premium',
    name: 'Premium',
    priceRub: 1400,
    priceKopecks: 140000,
    tokensPerMonth: 2500,
    signupTokens: 0,
    trialDays: 0,
    rollover: true,
    pricePerTokenRub: null,
    features: ['monthlyTokens', 'rollover'],
  },
  {
    id: 'payg',
    name: 'Pay-as-you-go',
    priceRub: null,
    priceKopecks: null,
    tokensPerMonth: 0,
    signupTokens: 0,
    trialDays: 0,
    rollover: false,
    pricePerTokenRub: 0.7,
    features: ['perToken'],
  },
];
