import { describe, expect, it } from 'vitest';
import {
  assign,
  createActor,
  createMachine,
  fromCallback,
  fromPromise,
  waitFor,
  type AnyMachineSnapshot,
} from 'xstate';
import type { Problem } from '../../src/domain/errors';
import { generationMessages } from '../../src/domain/images';
import type { GenerationReply, ImageRecord } from '../../src/domain/image-record';
import {
  canSubmit,
  formProblem,
  generationMachine,
  PROGRESS_CEILING,
  type GenerateRequest,
  type GenerationContext,
  type GenerationInputs,
} from '../../src/machines/generation';
import { describeModel, doneOf, errorOf, type Controls } from './harness';

const image = (id: number, prompt = `image ${id}`): ImageRecord => ({
  id,
  fileName: `${'a'.repeat(31)}${id}.png`,
  originalName: null,
  imageUrl: `http://localhost/images/${'a'.repeat(31)}${id}.png`,
  prompt,
  width: 1024,
  height: 1024,
  steps: 30,
  cfgScale: 7,
  stylePreset: null,
  size: '1024x1024',
  negativePrompt: null,
  aspectRatio: null,
  modelVariant: null,
  thumbnailUrl: `http://localhost/images/${'b'.repeat(31)}${id}.webp`,
  fileSize: 1234,
  mimeType: 'image/png',
  userId: 1,
  createdAt: '2026-11-01T10:00:00.000Z',
  updatedAt: '2026-11-01T10:00:00.000Z',
  seed: 77,
  model: 'original',
  finish_reason: 'SUCCESS',
});

const reply: GenerationReply = { success: true, data: image(100, 'A red fox'), tokens: { charged: 2 }, message: 'ok' };

/** Stands in for the session actor: records what the generation sends it. */
function fakeSession() {
  return createActor(
    createMachine({
      types: {} as {
        context: { charged: number[]; balances: number[] };
        events: { type: 'BALANCE.CHARGED'; amount: number } | { type: 'BALANCE.CHANGED'; balance: number };
      },
      context: { charged: [], balances: [] },
      on: {
        'BALANCE.CHARGED': {
          actions: assign(({ context, event }) => ({ charged: [...context.charged, event.amount] })),
        },
        'BALANCE.CHANGED': {
          actions: assign(({ context, event }) => ({ balances: [...context.balances, event.balance] })),
        },
      },
    }),
  ).start();
}

/** A refused charge as the API reports it: the code, SPEC's text, the balance and the cost. */
const refusal = {
  code: 'INSUFFICIENT_TOKENS',
  message: 'Insufficient tokens. Need 2 tokens but only have 1',
  details: { balance: 1, cost: 2 },
};

const session = fakeSession();
const input = { session, balance: 50 } as unknown as GenerationInputs;
const downloads: number[] = [];
const copies: string[] = [];
const logged: string[] = [];

const ctx = (s: AnyMachineSnapshot) => s.context as GenerationContext;
/** Which rule or failure, not the figures in it: balances 0 and 1 fail the same way. */
const kind = (p: Problem | null) => (p ? `${p.code}:${JSON.stringify(p.details?.rule ?? '')}` : null);
// The classes the rules depend on: blank prompt, bad seed, enough tokens, a last seed, the error.
const features = (c: GenerationContext) => ({
  blank: c.form.prompt.trim() === '',
  seedBad: c.form.seed !== '' && !/^\d+$/.test(c.form.seed),
  funds: c.balance >= 2,
  hasLastSeed: c.lastSeed !== null,
  problem: kind(formProblem(c)),
  error: kind(c.error),
});

describeModel('generation', {
  machine: generationMachine,
  input,
  // Form and generation events while the modal is closed, modal events while the generator
  // rests: every transition is still taken, and the traversal stays small.
  events: (snapshot) => {
    const modalOpen = snapshot.matches({ modal: 'open' });
    const resting = snapshot.matches({ generator: 'idle' }) && ctx(snapshot).lastSeed === null;
    return [
      ...(modalOpen
        ? []
        : [
            { type: 'FIELD.CHANGE', field: 'prompt', value: 'A red fox' },
            { type: 'FIELD.CHANGE', field: 'prompt', value: '   ' },
            { type: 'FIELD.CHANGE', field: 'seed', value: 'abc' },
            { type: 'TEMPLATE.APPLY', prompt: 'Misty mountain valley at sunrise' },
            { type: 'PROMPT.SET', prompt: 'Carried by Regenerate' },
            // Regenerate's parameters; the model kept, so the traversal's features stay comparable.
            { type: 'FORM.PRESET', values: { model: 'original', size: '1152x896', negativePrompt: 'fog' } },
            { type: 'SEED.USE_LAST' },
            { type: 'SUBMIT' },
            { type: 'BALANCE.SYNC', balance: 0 },
          ]),
      ...(resting || modalOpen
        ? [
            { type: 'RECENT.RELOAD' },
            { type: 'IMAGE.OPEN', image: image(1) },
            { type: 'IMAGE.CLOSE' },
            { type: 'DOWNLOAD', image: image(1) },
            { type: 'COPY_PROMPT', prompt: 'A red fox' },
          ]
        : []),
      ...(snapshot.matches({ generator: 'generating' }) ? [{ type: 'TICK' }] : []),
      ...doneOf(snapshot, 'generate', reply),
      ...errorOf(snapshot, 'generate', new Error('Ultra generation failed')),
      ...errorOf(snapshot, 'generate', refusal),
      ...doneOf(snapshot, 'loadRecent', [image(1), image(2)]),
      ...errorOf(snapshot, 'loadRecent', new Error('offline')),
    ];
  },
  emittedBy: { TICK: 'ticker', 'BALANCE.SYNC': 'watchBalance' },
  // What the flows depend on, not every keystroke: keeps the traversal finite. The SUT is
  // compared on the same features, since one key stands for many concrete contexts.
  serializeState: (s) => JSON.stringify([s.value, features(ctx(s))]),
  projectContext: (c) => features(c as GenerationContext),
  sut: (controls: Controls) =>
    generationMachine.provide({
      actors: {
        generate: controls.promise('generate'),
        loadRecent: controls.promise('loadRecent'),
        ticker: controls.callback('ticker'),
        watchBalance: controls.callback('watchBalance'),
      } as never,
      actions: {
        downloadImage: (_, params) => {
          downloads.push(params.image.id);
        },
        copyPrompt: (_, params) => {
          copies.push(params.prompt);
        },
        logFailure: (_, params) => {
          logged.push(params.what);
        },
      },
    }),
  check: (snapshot, controls, event) => {
    const context = ctx(snapshot);
    // SPEC: the bar never reaches 100 before the work is done.
    if (snapshot.matches({ generator: 'generating' })) {
      expect(context.progress).toBeLessThanOrEqual(PROGRESS_CEILING);
      expect(context.error).toBeNull();
      expect(context.phrase).toBeGreaterThanOrEqual(0);
      expect(context.phrase).toBeLessThan(31);
      // The request sent is the one the form describes.
      const sent = controls.inputs.filter((i) => i.src === 'generate').at(-1)?.input as GenerateRequest;
      expect(sent.endpoint).toBe('/api/stability/text-to-image');
    }
    if (event.type === 'SUBMIT' && snapshot.matches({ generator: 'error' })) {
      expect(context.error).toEqual(formProblem(context));
    }
    if (event.type.includes('generator.generating') && event.type.startsWith('xstate.done.actor')) {
      expect(context.current?.id).toBe(100);
      expect(context.recent[0]?.id).toBe(100);
      expect(context.recent.length).toBeLessThanOrEqual(6);
    }
    // A refusal states the balance: the form takes it (and so does the session).
    if (
      event.type.startsWith('xstate.error.actor.0.generation.generator') &&
      context.error?.code === 'INSUFFICIENT_TOKENS'
    ) {
      expect(context.balance).toBe(1);
    }
    if (event.type === 'DOWNLOAD') expect(downloads.at(-1)).toBe(1);
    if (event.type === 'COPY_PROMPT') expect(copies.at(-1)).toBe('A red fox');
    expect(context.balance).toBeGreaterThanOrEqual(0);
  },
});

describe('generation rules through the machine', () => {
  const start = (
    overrides: Partial<GenerationInputs> = {},
    generate = () => new Promise<GenerationReply>(() => {}),
  ) => {
    const actor = createActor(
      generationMachine.provide({
        actors: {
          generate: fromPromise<GenerationReply, GenerateRequest>(generate),
          loadRecent: fromPromise<ImageRecord[], { limit: number }>(async () => []),
          watchBalance: fromCallback(() => () => {}),
          ticker: fromCallback(() => () => {}),
        },
      }),
      { input: { ...input, ...overrides } },
    );
    return actor.start();
  };

  it('reports SPEC section 5 rules in order, one at a time', () => {
    const actor = start({ balance: 1 });
    const set = (field: string, value: string) => actor.send({ type: 'FIELD.CHANGE', field: field as never, value });
    const submit = () => {
      actor.send({ type: 'SUBMIT' });
      return actor.getSnapshot().context.error?.message;
    };
    set('model', 'sd3');
    set('aspectRatio', '');
    set('sd3Model', '');
    set('seed', '-1');
    set('negativePrompt', 'n'.repeat(2001));
    expect(submit()).toBe(generationMessages.promptRequired);
    set('prompt', 'p'.repeat(2001));
    expect(submit()).toBe(generationMessages.promptTooLong);
    set('prompt', 'A red fox');
    expect(submit()).toBe(generationMessages.negativePromptTooLong);
    set('negativePrompt', '');
    expect(submit()).toBe(generationMessages.seedInvalid);
    set('seed', '4294967295');
    expect(submit()).toBe('Insufficient tokens. Need 12 tokens but only have 1');
    // The wording comes from i18n by code, with the values filled in.
    expect(actor.getSnapshot().context.error).toMatchObject({
      code: 'INSUFFICIENT_TOKENS',
      details: { cost: 12, balance: 1 },
    });
    actor.send({ type: 'BALANCE.SYNC', balance: 12 });
    expect(submit()).toBe(generationMessages.aspectRatioRequired);
    set('aspectRatio', '9:21');
    expect(submit()).toBe(generationMessages.variantRequired);
    set('model', 'original');
    set('size', '');
    expect(submit()).toBe(generationMessages.sizeRequired);
    set('model', 'gpt-image');
    expect(submit()).toBe('Unknown model: gpt-image');
    set('model', 'sd3');
    set('sd3Model', 'sd3.5-medium');
    actor.send({ type: 'SUBMIT' });
    expect(actor.getSnapshot().matches({ generator: 'generating' })).toBe(true);
  });

  it('disables submit on a blank prompt or a short balance, and sends the charge to the session', async () => {
    expect(canSubmit({ form: { ...start().getSnapshot().context.form, prompt: ' ' }, balance: 50 })).toBe(false);
    expect(
      canSubmit({ form: { ...start().getSnapshot().context.form, prompt: 'x', model: 'ultra' }, balance: 15 }),
    ).toBe(false);
    const own = fakeSession();
    const actor = start({ session: own as never, prompt: 'A red fox' }, async () => reply);
    expect(actor.getSnapshot().context.form.prompt).toBe('A red fox');
    actor.send({ type: 'SUBMIT' });
    await waitFor(actor, (s) => s.matches({ generator: 'result' }));
    expect(own.getSnapshot().context.charged).toEqual([2]);
    expect(actor.getSnapshot().context.balance).toBe(48);
    expect(actor.getSnapshot().context.progress).toBe(100);
    actor.send({ type: 'FIELD.CHANGE', field: 'seed', value: '' });
    actor.send({ type: 'SEED.USE_LAST' });
    expect(actor.getSnapshot().context.form.seed).toBe('77');
  });

  it("keeps the server's code and text, or SPEC's fallback when the failure says nothing", async () => {
    const failing = start({ prompt: 'x' }, () =>
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the real actors reject with Problem values (src/api)
      Promise.reject({ code: 'PROVIDER_ERROR', message: 'Core generation failed' }),
    );
    failing.send({ type: 'SUBMIT' });
    await waitFor(failing, (s) => s.matches({ generator: 'error' }));
    expect(failing.getSnapshot().context.error).toEqual({ code: 'PROVIDER_ERROR', message: 'Core generation failed' });
    const silent = start({ prompt: 'x' }, () => Promise.reject(new Error('')));
    silent.send({ type: 'SUBMIT' });
    await waitFor(silent, (s) => s.matches({ generator: 'error' }));
    expect(silent.getSnapshot().context.error?.message).toBe('Generation failed. Please try again.');
  });

  it('a refused charge brings the session and the form to the balance the server stated', async () => {
    const own = fakeSession();
    const actor = start({ session: own as never, prompt: 'A red fox', balance: 50 }, () =>
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the real actors reject with Problem values (src/api)
      Promise.reject(refusal),
    );
    actor.send({ type: 'SUBMIT' });
    await waitFor(actor, (s) => s.matches({ generator: 'error' }));
    expect(own.getSnapshot().context.balances).toEqual([1]);
    expect(actor.getSnapshot().context.balance).toBe(1);
    // Generate is disabled now: the balance no longer covers the model.
    expect(canSubmit(actor.getSnapshot().context)).toBe(false);
  });

  it("a charged reply brings the session to the server's figure when the reply states it", async () => {
    const own = fakeSession();
    const actor = start({ session: own as never, prompt: 'A red fox', balance: 50 }, async () => ({
      ...reply,
      balanceAfter: 31,
    }));
    actor.send({ type: 'SUBMIT' });
    await waitFor(actor, (s) => s.matches({ generator: 'result' }));
    expect(own.getSnapshot().context.balances).toEqual([31]);
    expect(own.getSnapshot().context.charged).toEqual([]);
    expect(actor.getSnapshot().context.balance).toBe(31);
  });
});
