import { expect } from 'vitest';
import type { AnyMachineSnapshot } from 'xstate';
import { chatSettingsMachine, type ChatSettingsContext } from '../../src/machines/chat-settings';
import { describeModel } from './harness';

const persisted: string[] = [];

describeModel('chat-settings', {
  machine: chatSettingsMachine,
  input: { storedModel: 'gone-model' },
  events: () => [
    { type: 'SETTINGS.OPEN' },
    { type: 'SETTINGS.CLOSE' },
    { type: 'SETTINGS.MODEL', model: 'gpt-4o-mini' },
    { type: 'SETTINGS.CONTEXT_LIMIT', value: '1200' },
    { type: 'SETTINGS.CONTEXT_LIMIT', value: 'abc' },
    { type: 'SETTINGS.CONTEXT_LIMIT', value: 50 },
    { type: 'SETTINGS.CONTEXT_LIMIT', value: 99999 },
    { type: 'MODELS.LOADED', ids: ['gpt-4o', 'gpt-4o-mini'], defaultId: 'gpt-4o' },
  ],
  sut: () =>
    chatSettingsMachine.provide({
      actions: {
        persistModel: (_, params) => {
          persisted.push(params.model);
        },
      },
    }),
  check: (snapshot: AnyMachineSnapshot, _controls, event) => {
    const context = snapshot.context as ChatSettingsContext;
    // SPEC 5: 100..10000 in steps of 100, never anything else.
    expect(context.contextTokensLimit).toBeGreaterThanOrEqual(100);
    expect(context.contextTokensLimit).toBeLessThanOrEqual(10000);
    expect(context.contextTokensLimit % 100).toBe(0);
    if (event.type === 'SETTINGS.MODEL') expect(persisted.at(-1)).toBe('gpt-4o-mini');
    if (event.type === 'MODELS.LOADED') expect(['gpt-4o', 'gpt-4o-mini']).toContain(context.model);
  },
});
