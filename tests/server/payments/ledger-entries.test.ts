import { describe, expect, it } from 'vitest';
import { ledgerEntrySchema } from '../../../src/domain/billing';
import { PORTRAIT_MODEL } from '../../../src/domain/portraits';
import { toLedgerEntry } from '../../../server/payments/ledger-entries';
import type { LedgerListRow } from '../../../server/payments/repository';

/**
 * Issue #27 item 3: the spend history's wording is the browser's, from reason codes and
 * values; the server builds no sentence and names no model.
 */
function row(fields: Partial<LedgerListRow>): LedgerListRow {
  return {
    id: 7,
    delta: -6,
    balanceAfter: 44,
    reason: 'generation_charge',
    reference: null,
    createdAt: new Date('2026-11-24T12:30:00.000Z'),
    generationModel: null,
    chatModel: null,
    chatInputTokens: null,
    chatOutputTokens: null,
    paymentId: null,
    paymentTokens: null,
    paymentPackage: null,
    ...fields,
  };
}

describe('a ledger row as GET /api/ledger sends it', () => {
  it('carries a code and values only: no description, the model as its catalogue id', () => {
    const entry = toLedgerEntry(row({ generationModel: 'core' }));
    expect(entry).toEqual({
      id: 7,
      createdAt: '2026-11-24T12:30:00.000Z',
      delta: -6,
      balanceAfter: 44,
      kind: 'image',
      params: { model: 'core' },
    });
    expect(ledgerEntrySchema.strict().safeParse(entry).success).toBe(true);
  });

  it('tells a portrait by its model id, not by a word in a model name', () => {
    expect(toLedgerEntry(row({ delta: -12, generationModel: PORTRAIT_MODEL }))).toMatchObject({
      kind: 'portrait',
      params: {},
    });
    // An image model whose id merely contains the word is still an image.
    expect(toLedgerEntry(row({ generationModel: 'portrait-xl' }))).toMatchObject({
      kind: 'image',
      params: { model: 'portrait-xl' },
    });
  });

  it('keeps a chat reservation and its returned part apart, with the model id and the model tokens', () => {
    const chat = { chatModel: 'gpt-4o', chatInputTokens: 120, chatOutputTokens: 380 };
    expect(toLedgerEntry(row({ reason: 'chat_reserve', delta: -3, ...chat }))).toMatchObject({
      kind: 'chat',
      params: { model: 'gpt-4o', tokens: 500 },
    });
    expect(toLedgerEntry(row({ reason: 'chat_release', delta: 1, ...chat }))).toMatchObject({
      kind: 'chat_release',
      params: { model: 'gpt-4o', tokens: 500 },
    });
  });

  it('gives payments their token count, plan and payment id, and other reasons a code alone', () => {
    const paid = { paymentId: 'pay-1', paymentPackage: 'pro' };
    expect(toLedgerEntry(row({ reason: 'purchase', delta: 1000, paymentId: 'pay-1' }))).toMatchObject({
      kind: 'purchase',
      params: { tokens: 1000, paymentId: 'pay-1' },
    });
    expect(toLedgerEntry(row({ reason: 'subscription_grant', delta: 1000, ...paid }))).toMatchObject({
      kind: 'subscription_grant',
      params: { tokens: 1000, plan: 'pro', paymentId: 'pay-1' },
    });
    expect(toLedgerEntry(row({ reason: 'payment_refund', delta: -150, ...paid }))).toMatchObject({
      kind: 'payment_refund',
      params: { tokens: 150, plan: 'pro', paymentId: 'pay-1' },
    });
    expect(toLedgerEntry(row({ reason: 'signup_bonus', delta: 50 }))).toMatchObject({
      kind: 'signup',
      params: { tokens: 50 },
    });
    expect(toLedgerEntry(row({ reason: 'admin_take', delta: -5 }))).toMatchObject({ kind: 'admin', params: {} });
    const unknown = toLedgerEntry(row({ reason: 'something_new', delta: 5 }));
    expect(unknown).toMatchObject({ kind: 'other', params: {} });
    expect(Object.keys(unknown)).not.toContain('description');
  });
});
