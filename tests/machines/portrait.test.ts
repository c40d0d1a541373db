import { describe, expect, it } from 'vitest';
import { assign, createActor, createMachine, fromCallback, fromPromise, waitFor } from 'xstate';
import { portraitMessages } from '../../src/domain/portraits';
import {
  portraitMachine,
  type ChosenPhoto,
  type PortraitInputs,
  type PortraitReply,
  type PortraitRequest,
} from '../../src/machines/portrait';

const photo = (name: string, size = 120_000, type = 'image/jpeg'): ChosenPhoto => ({
  name,
  size,
  type,
  file: { fake: name },
  previewUrl: `blob:${name}`,
});

const reply: PortraitReply = {
  success: true,
  data: { id: 7, url: 'http://localhost/images/abcdef0123456789abcdef0123456789.webp', prompt: 'A knight' },
  tokens: { charged: 12 },
  message: 'Portrait generated successfully',
};

function fakeSession() {
  return createActor(
    createMachine({
      types: {} as { context: { charged: number[] }; events: { type: 'BALANCE.CHARGED'; amount: number } },
      context: { charged: [] },
      on: {
        'BALANCE.CHARGED': {
          actions: assign(({ context, event }) => ({ charged: [...context.charged, event.amount] })),
        },
      },
    }),
  ).start();
}

const session = fakeSession();
const input = { session, balance: 50 } as unknown as PortraitInputs;

describe('portrait rules through the machine', () => {
  const start = (overrides: Partial<PortraitInputs> = {}, create = () => new Promise<PortraitReply>(() => {})) =>
    createActor(
      portraitMachine.provide({
        actors: {
          createPortrait: fromPromise<PortraitReply, PortraitRequest>(create),
          watchBalance: fromCallback(() => () => {}),
        },
      }),
      { input: { ...input, ...overrides } },
    ).start();

  it('checks SPEC section 5 in order: photo, prompt, balance', () => {
    const actor = start({ balance: 5 });
    const submit = () => {
      actor.send({ type: 'SUBMIT' });
      return actor.getSnapshot().context.error?.message;
    };
    expect(submit()).toBe(portraitMessages.photoRequired);
    actor.send({ type: 'PHOTO.CHOOSE', photo: photo('me.jpg') });
    expect(submit()).toBe(portraitMessages.promptRequired);
    actor.send({ type: 'PROMPT.CHANGE', value: 'p'.repeat(2001) });
    expect(submit()).toBe('Prompt must be less than 2000 characters');
    actor.send({ type: 'PROMPT.CHANGE', value: 'A knight' });
    expect(submit()).toBe('Insufficient tokens. You need 12 tokens for portrait generation.');
    actor.send({ type: 'BALANCE.SYNC', balance: 12 });
    actor.send({ type: 'SUBMIT' });
    expect(actor.getSnapshot().matches('generating')).toBe(true);
  });

  it('refuses a file by size, then by type, keeping the photo already chosen', () => {
    const actor = start();
    actor.send({ type: 'PHOTO.CHOOSE', photo: photo('me.jpg') });
    actor.send({ type: 'PHOTO.CHOOSE', photo: photo('big.png', 10 * 1024 * 1024 + 1, 'text/plain') });
    expect(actor.getSnapshot().context.error).toMatchObject({
      code: 'UPLOAD_TOO_LARGE',
      message: 'File size must be less than 10MB. Current size: 10.00 MB',
    });
    actor.send({ type: 'PHOTO.CHOOSE', photo: photo('face.svg', 100, 'image/svg+xml') });
    expect(actor.getSnapshot().context.error?.message).toBe('Only JPG, PNG, and WebP formats are supported');
    expect(actor.getSnapshot().context.photo?.name).toBe('me.jpg');
    for (const type of ['image/jpeg', 'image/jpg', 'image/png', 'image/webp']) {
      actor.send({ type: 'PHOTO.CHOOSE', photo: photo(`ok.${type}`, 100, type) });
      expect(actor.getSnapshot().matches({ editable: 'photoChosen' })).toBe(true);
    }
  });

  it('ignores edits while generating, then shows the result and charges the session', async () => {
    const own = fakeSession();
    let finish: (value: PortraitReply) => void = () => {};
    const actor = start({ session: own as never }, () => new Promise((resolve) => (finish = resolve)));
    actor.send({ type: 'PHOTO.CHOOSE', photo: photo('me.jpg') });
    actor.send({ type: 'TEMPLATE.APPLY', prompt: 'A knight' });
    actor.send({ type: 'SUBMIT' });
    actor.send({ type: 'PROMPT.CHANGE', value: 'changed' });
    actor.send({ type: 'PHOTO.CLEAR' });
    expect(actor.getSnapshot().context.prompt).toBe('A knight');
    expect(actor.getSnapshot().context.photo?.name).toBe('me.jpg');
    finish(reply);
    await waitFor(actor, (s) => s.matches({ editable: 'result' }));
    expect(own.getSnapshot().context.charged).toEqual([12]);
    expect(actor.getSnapshot().context.balance).toBe(38);
    // SPEC section 4: the face-swap result as an image record with its defaults.
    expect(actor.getSnapshot().context.result).toMatchObject({
      id: 7,
      model: 'Portrait generation',
      finish_reason: 'success',
      fileSize: 1_024_000,
      mimeType: 'image/webp',
    });
  });

  it('keeps the server error code and values', async () => {
    const body = { details: { sizeMb: '11.00', maxMb: 10 } };
    const actor = start({}, () =>
      Promise.reject(
        Object.assign(new Error('File size must be less than 10MB. Current size: 11.00 MB'), {
          code: 'UPLOAD_TOO_LARGE',
          body,
        }),
      ),
    );
    actor.send({ type: 'PHOTO.CHOOSE', photo: photo('me.jpg') });
    actor.send({ type: 'PROMPT.CHANGE', value: 'x' });
    actor.send({ type: 'SUBMIT' });
    await waitFor(actor, (s) => s.matches({ editable: 'error' }));
    expect(actor.getSnapshot().context.error).toEqual({
      code: 'UPLOAD_TOO_LARGE',
      message: 'File size must be less than 10MB. Current size: 11.00 MB',
      details: body.details,
    });
  });
});
