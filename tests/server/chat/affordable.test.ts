import { describe, expect, it } from 'vitest';
import { worstCaseCost } from '../../../src/domain/chat';
import type { ConfiguredChatModel } from '../../../server/config';
import { affordableReply } from '../../../server/chat/service';

/**
 * A reply's limit is lowered to what the balance covers instead of refusing (DESIGN "Chat"
 * reserves the worst case; docs/architecture.md "Chat" lowers it): the longest reply, at most
 * the one asked for, whose worst case the balance pays for; 402 only when not even a
 * one-token reply is covered. The oracle walks every reply
 * length down from the one asked for with the price rule of src/domain/chat.ts, so it knows
 * nothing of the arithmetic affordableReply solves it with.
 */

function model(inputCostPer1M: number, outputCostPer1M: number): ConfiguredChatModel {
  return { id: 'm', name: 'M', inputCostPer1M, outputCostPer1M } as ConfiguredChatModel;
}

const MODELS = [
  // GPT-4o as the test set prices it: 0.1 token per prompt token, 1 per reply token.
  model(100_000, 1_000_000),
  // Cheaper than a token per reply token: many lengths share one price.
  model(10_000, 100_000),
  // Prices that make float noise in every product.
  model(333_333, 777_777),
  model(0, 3_000_000),
];

function largestAffordable(prompt: number, requested: number, price: ConfiguredChatModel, balance: number) {
  for (let m = requested; m >= 1; m -= 1) {
    if (worstCaseCost(prompt, m, price) <= balance) return m;
  }
  return undefined;
}

describe('affordableReply: the largest reply the balance pays for', () => {
  it('matches the walk down from the asked length, on every price, prompt and balance', () => {
    let lowered = 0;
    let refused = 0;
    for (const price of MODELS) {
      for (const prompt of [0, 1, 7, 37, 500]) {
        for (const requested of [1, 2, 50, 333]) {
          for (let balance = 0; balance <= 90; balance += 1) {
            const expected = largestAffordable(prompt, requested, price, balance);
            const label = JSON.stringify({ price, prompt, requested, balance });
            if (expected === undefined) {
              refused += 1;
              const smallest = worstCaseCost(prompt, 1, price);
              expect(() => affordableReply(prompt, requested, price, balance), label).toThrow(
                expect.objectContaining({
                  code: 'INSUFFICIENT_TOKENS',
                  message: `Insufficient tokens. Need ${smallest} tokens but only have ${balance}`,
                  details: { balance, cost: smallest },
                }),
              );
              continue;
            }
            if (expected < requested) lowered += 1;
            expect(affordableReply(prompt, requested, price, balance), label).toEqual({
              maxTokens: expected,
              cost: worstCaseCost(prompt, expected, price),
            });
          }
        }
      }
    }
    // The walk took every branch: replies lowered, refused, and paid in full.
    expect(lowered).toBeGreaterThan(100);
    expect(refused).toBeGreaterThan(10);
  });

  it('pays the asked length when the balance is exactly its worst case, and one token less is lowered', () => {
    const price = MODELS[0]!;
    const full = worstCaseCost(37, 50, price);
    expect(affordableReply(37, 50, price, full)).toEqual({ maxTokens: 50, cost: full });
    expect(affordableReply(37, 50, price, full - 1).maxTokens).toBe(49);
  });

  it('takes a one-token reply when the balance is exactly its cost', () => {
    const price = MODELS[0]!;
    const smallest = worstCaseCost(500, 1, price);
    expect(affordableReply(500, 2000, price, smallest)).toEqual({ maxTokens: 1, cost: smallest });
    expect(() => affordableReply(500, 2000, price, smallest - 1)).toThrow(
      expect.objectContaining({ code: 'INSUFFICIENT_TOKENS' }),
    );
  });

  it('finds the largest for a large balance and a reply far longer than it pays for', () => {
    const price = MODELS[2]!;
    const balance = 1_000_000;
    const requested = 5_000_000;
    const { maxTokens, cost } = affordableReply(100, requested, price, balance);
    expect(cost).toBeLessThanOrEqual(balance);
    expect(worstCaseCost(100, maxTokens + 1, price)).toBeGreaterThan(balance);
  });
});
