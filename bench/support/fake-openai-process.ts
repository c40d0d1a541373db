import { startFakeOpenAi, type FakeBehaviour } from '../../tests/server/providers/chat/fake-openai';
import { serveParent } from './parent';

/** The fake OpenAI-compatible provider of the tests, in a process of its own. */
const fake = await startFakeOpenAi({ reply: process.env.FAKE_REPLY ?? 'Hello.', chunkSize: 8 });

serveParent(async (request) => {
  if (request.type === 'ready') return { baseURL: fake.baseURL };
  if (request.type === 'behaviour') {
    fake.setBehaviour(request.behaviour as Partial<FakeBehaviour>);
    return null;
  }
  throw new Error(`unknown request ${request.type}`);
});
process.on('SIGTERM', () => {
  void fake.close().then(() => process.exit(0));
});
