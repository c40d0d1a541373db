import { createOfflineImageProvider } from '../../../server/providers/images/offline';
import type { ImageJob, ImageProvider, ImageResult } from '../../../server/providers/images/types';
import { until } from '../chat/helpers';
import type { TestApp } from '../helpers';
import { postJson, requestsOf, type TestUser } from '../images/support';

/** SPEC section 7's route of the original model, and its cost (SPEC section 3). */
export const ORIGINAL = '/api/stability/text-to-image';
export const ORIGINAL_COST = 2;

export function originalBody(prompt: string) {
  return { prompt, width: 1024, height: 1024 };
}

/** Asks for an original-model picture and waits for the answer. */
export function postOriginal(app: TestApp, user: TestUser, prompt: string) {
  return postJson(app, user, ORIGINAL, originalBody(prompt));
}

/** The id of the user's job with this prompt, once it is stored. */
export async function jobIdOf(app: TestApp, user: TestUser, prompt: string): Promise<number> {
  return until(async () => (await requestsOf(app, user)).find((r) => r.prompt === prompt)?.id);
}

/** One provider call a held provider has started and not yet answered. */
export interface HeldCall {
  prompt: string;
  signal?: AbortSignal;
  /** Answers the call with the offline picture. */
  release(): void;
}

/**
 * An image provider whose calls wait until the test releases them (or they are aborted),
 * drawing the offline picture; it records the order calls started in and how many ran at
 * once. Stands in for Stability's latency; the wire shapes are tested against the fake
 * Stability server elsewhere (tests/server/images).
 */
export function heldImageProvider(): ImageProvider & {
  started: string[];
  held: HeldCall[];
  aborted: string[];
  mostAtOnce: number;
  releaseAll(): void;
} {
  const offline = createOfflineImageProvider();
  const provider = {
    name: 'offline',
    started: [] as string[],
    held: [] as HeldCall[],
    aborted: [] as string[],
    mostAtOnce: 0,
    releaseAll() {
      for (const call of [...provider.held]) call.release();
    },
    async generate(job: ImageJob): Promise<ImageResult> {
      provider.started.push(job.prompt);
      await new Promise<void>((resolve, reject) => {
        const call: HeldCall = {
          prompt: job.prompt,
          signal: job.signal,
          release: () => {
            provider.held.splice(provider.held.indexOf(call), 1);
            resolve();
          },
        };
        provider.held.push(call);
        provider.mostAtOnce = Math.max(provider.mostAtOnce, provider.held.length);
        job.signal?.addEventListener(
          'abort',
          () => {
            provider.held.splice(provider.held.indexOf(call), 1);
            provider.aborted.push(job.prompt);
            reject(job.signal?.reason instanceof Error ? job.signal.reason : new Error('aborted'));
          },
          { once: true },
        );
      });
      return offline.generate({ ...job, signal: undefined });
    },
  };
  return provider;
}

/** Reads server-sent events off a fetch response: each frame's id, event and parsed data. */
export async function* sseFrames(response: Response): AsyncGenerator<{ id?: number; event?: string; data?: unknown }> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const out: { id?: number; event?: string; data?: unknown } = {};
      let data = '';
      for (const line of frame.split('\n')) {
        if (line.startsWith('id: ')) out.id = Number(line.slice(4));
        else if (line.startsWith('event: ')) out.event = line.slice(7);
        else if (line.startsWith('data: ')) data += line.slice(6);
      }
      if (data !== '') out.data = JSON.parse(data) as unknown;
      if (out.id !== undefined || out.event !== undefined) yield out;
    }
  }
}
