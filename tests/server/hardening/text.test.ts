import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OFFLINE_CHAT_MODEL_ID } from '../../../server/providers/chat/offline';
import { startTestApp, testDatabases, type TestApp } from '../helpers';
import { countsFor, signInPerson, type Person } from '../chat/helpers';
import {
  balance,
  expectStorageMatchesRows,
  postJson,
  requestsOf,
  signedInUser,
  type TestUser,
} from '../images/support';

const CONTROL_VALUES = ['\u0000', 'a\u0000b', 'cat\u0007', '\u001b[2J', 'x\u007f', '\u0085', 'half \ud800 pair'];

describe.each(testDatabases())('stored text on $name', (kind) => {
  let app: TestApp;
  let user: TestUser;
  let person: Person;
  beforeAll(async () => {
    app = await startTestApp(kind);
    user = await signedInUser(app, 'text-images@example.com');
    person = await signInPerson(app, 'text-chat@example.com', 500);
  });
  afterAll(async () => {
    await app.close();
  });

  it('refuses control characters in prompts and negative prompts with 400 INVALID_TEXT, charging nothing', async () => {
    const before = await balance(app, user);
    for (const value of CONTROL_VALUES) {
      for (const [field, body] of [
        ['prompt', { prompt: value, aspect_ratio: '1:1' }],
        ['prompt', { prompt: `a cat ${value}`, aspect_ratio: '1:1' }],
        ['negative_prompt', { prompt: 'a cat', negative_prompt: value, aspect_ratio: '1:1' }],
      ] as const) {
        const response = await postJson(app, user, '/api/stability-core/generate', body);
        expect(response.status, JSON.stringify(body)).toBe(400);
        // The field named, so the form marks the one to correct.
        expect(response.body).toMatchObject({
          success: false,
          code: 'INVALID_TEXT',
          message: 'Text contains characters that are not allowed',
          details: { field },
        });
      }
    }
    expect(await balance(app, user)).toBe(before);
    expect(await requestsOf(app, user)).toEqual([]);
  });

  it('refuses control characters in chat messages and conversation titles, storing nothing', async () => {
    const before = await countsFor(app, person.id);
    for (const value of CONTROL_VALUES) {
      const titled = await postJson(app, { jar: person.jar, id: person.id }, '/llm/conversations', {
        title: `Chat ${value}`,
      });
      expect(titled.status).toBe(400);
      expect(titled.body).toMatchObject({ success: false, code: 'INVALID_TEXT' });
      const chat = await postJson(app, { jar: person.jar, id: person.id }, '/llm/chat', {
        message: `Hello ${value}`,
        model: OFFLINE_CHAT_MODEL_ID,
      });
      expect(chat.status).toBe(400);
      expect(chat.body).toMatchObject({ success: false, code: 'INVALID_TEXT' });
    }
    // A newline in a title is no more welcome than a NUL.
    const newline = await postJson(app, { jar: person.jar, id: person.id }, '/llm/conversations', { title: 'a\nb' });
    expect(newline.body).toMatchObject({ code: 'INVALID_TEXT' });
    expect(await countsFor(app, person.id)).toEqual(before);
  });

  it('counts a prompt the way the provider does: 1001 emoji are accepted and generated, 2001 refused before any charge', async () => {
    const fine = await postJson(app, user, '/api/stability-core/generate', {
      prompt: '😀'.repeat(1001),
      aspect_ratio: '1:1',
    });
    expect(fine.status).toBe(200);
    const refused = await postJson(app, user, '/api/stability-core/generate', {
      prompt: '😀'.repeat(2001),
      aspect_ratio: '1:1',
    });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe('Prompt must be less than 2000 characters');
    const requests = await requestsOf(app, user);
    expect(requests.map((r) => r.status)).toEqual(['COMPLETED']);
    await expectStorageMatchesRows(app);
  });

  it('keeps newlines and tabs in a prompt and a chat message', async () => {
    const prompt = await postJson(app, user, '/api/stability-core/generate', {
      prompt: 'a cat\n\twith a hat',
      aspect_ratio: '1:1',
    });
    expect(prompt.status).toBe(200);
    const chat = await postJson(app, { jar: person.jar, id: person.id }, '/llm/chat', {
      message: 'line one\n\tline two',
      model: OFFLINE_CHAT_MODEL_ID,
    });
    expect(chat.status).toBe(200);
  });
});
