import { countMessageTokens, countTokens } from './tokens';
import type { ChatChunk, ChatEngine, ChatMessageIn, ChatRequest } from './types';

/**
 * The default chat engine when no language model is configured. It is honest about what
 * it is, and streams like a model does, so conversations, streaming and billing run for
 * real without any account.
 */

export const OFFLINE_CHAT_MODEL_ID = 'offline-assistant';

export interface OfflineChatEngineOptions {
  /** Pause between streamed pieces; 0 streams as fast as the consumer reads. */
  tokenDelayMs?: number;
}

type Lang = 'en' | 'ru';

const CODE_WORDS_EN = ['code', 'function', 'script', 'example', 'snippet', 'program'];
// Russian words inflect, so these are stems: "примеры", "кода", "функцию", "программу".
const CODE_STEMS_RU = ['пример', 'код', 'функци', 'программ', 'скрипт'];

function words(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w !== '');
}

export function detectLanguage(text: string): Lang {
  const cyrillic = text.match(/\p{Script=Cyrillic}/gu)?.length ?? 0;
  const latin = text.match(/\p{Script=Latin}/gu)?.length ?? 0;
  return cyrillic > latin ? 'ru' : 'en';
}

export function asksForCode(text: string): boolean {
  return words(text).some(
    (w) =>
      CODE_WORDS_EN.some((k) => w === k || w === `${k}s` || (k.length >= 6 && w.startsWith(k))) ||
      CODE_STEMS_RU.some((s) => w.startsWith(s)),
  );
}

type CodeLang = 'python' | 'js' | 'ts';

function codeLanguage(text: string): CodeLang {
  const ws = words(text);
  if (ws.some((w) => w === 'python' || w.startsWith('питон'))) return 'python';
  if (ws.some((w) => w === 'javascript' || w === 'js')) return 'js';
  return 'ts';
}

const CODE_SAMPLES: Record<CodeLang, string> = {
  ts: [
    'function countWords(text: string): number {',
    '  return text.trim().split(/\\s+/).filter(Boolean).length;',
    '}',
    '',
    "console.log(countWords('hello offline world')); // 3",
  ].join('\n'),
  js: [
    'function countWords(text) {',
    '  return text.trim().split(/\\s+/).filter(Boolean).length;',
    '}',
    '',
    "console.log(countWords('hello offline world')); // 3",
  ].join('\n'),
  python: [
    'def count_words(text: str) -> int:',
    '    return len(text.split())',
    '',
    '',
    'print(count_words("hello offline world"))  # 3',
  ].join('\n'),
};

const QUOTE_MAX_CHARS = 200;

/**
 * The quote is one line with markdown punctuation escaped: a user's "```" or "# " must
 * not open a code block or a heading in the middle of the reply.
 */
function quote(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const chars = Array.from(flat);
  const cut = chars.length > QUOTE_MAX_CHARS ? `${chars.slice(0, QUOTE_MAX_CHARS).join('')}…` : flat;
  return `> ${cut.replace(/[\\`*_[\]<>#|~]/g, (c) => `\\${c}`)}`;
}

function lastUserMessage(messages: readonly ChatMessageIn[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role === 'user') return m.content;
  }
  return '';
}

function plural(n: number, one: string, few: string, many: string): string {
  const mod10 = n % 10;
  const mod100 = n % 100;
  if (mod10 === 1 && mod100 !== 11) return one;
  if (mod10 >= 2 && mod10 <= 4 && (mod100 < 12 || mod100 > 14)) return few;
  return many;
}

/** The whole reply for a conversation; the same messages always give the same text. */
export function composeOfflineReply(messages: readonly ChatMessageIn[]): string {
  const text = lastUserMessage(messages);
  const lang = detectLanguage(text);
  const wordCount = words(text).length;
  const charCount = Array.from(text.trim()).length;
  const turns = messages.filter((m) => m.role !== 'system').length;
  const wantsCode = asksForCode(text);
  const codeLang = codeLanguage(text);
  const parts: string[] = [];

  if (lang === 'ru') {
    parts.push(
      '## Офлайн-ассистент',
      'Я **офлайн-ассистент**: на этом сервере не настроена языковая модель, поэтому мой ответ заготовлен заранее, а не сгенерирован.',
      text.trim() === '' ? 'Ваше сообщение пустое.' : `Вы написали:\n\n${quote(text)}`,
      'Что я могу сказать:',
      [
        `- В вашем сообщении ${wordCount} ${plural(wordCount, 'слово', 'слова', 'слов')} и ${charCount} ${plural(charCount, 'символ', 'символа', 'символов')}.`,
        `- В этом разговоре ${turns} ${plural(turns, 'сообщение', 'сообщения', 'сообщений')} в контексте.`,
        '- Ответ приходит по частям, как от настоящей модели, и токены списываются так же.',
        '- Чтобы получать настоящие ответы, подключите OpenAI-совместимый сервис (OpenAI, Ollama, vLLM или OpenRouter) в настройках сервера.',
      ].join('\n'),
    );
    if (wantsCode) {
      parts.push(
        '### Пример кода',
        `\`\`\`${codeLang}\n${CODE_SAMPLES[codeLang]}\n\`\`\``,
        'Этот пример тоже заготовлен заранее.',
      );
    }
  } else {
    parts.push(
      '## Offline assistant',
      "I'm the **offline assistant**: no language model is configured on this server, so this reply is scripted, not generated.",
      text.trim() === '' ? 'Your message was empty.' : `You wrote:\n\n${quote(text)}`,
      'Here is what I can tell you:',
      [
        `- Your message has ${wordCount} ${wordCount === 1 ? 'word' : 'words'} and ${charCount} ${charCount === 1 ? 'character' : 'characters'}.`,
        `- This conversation has ${turns} ${turns === 1 ? 'message' : 'messages'} in context.`,
        '- Replies stream piece by piece like a real model, and tokens are billed the same way.',
        '- For real answers, connect an OpenAI-compatible service (OpenAI, Ollama, vLLM or OpenRouter) in the server settings.',
      ].join('\n'),
    );
    if (wantsCode) {
      parts.push(
        '### Code example',
        `\`\`\`${codeLang}\n${CODE_SAMPLES[codeLang]}\n\`\`\``,
        'This example is scripted too.',
      );
    }
  }
  return parts.join('\n\n');
}

/**
 * Cuts the reply into pieces of a few characters, each with its leading whitespace,
 * which looks like model tokens on screen. The pieces join back to the exact text.
 */
export function splitIntoPieces(text: string): string[] {
  return text.match(/\s*\S{1,4}|\s+/gu) ?? [];
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

export function createOfflineChatEngine(options: OfflineChatEngineOptions = {}): ChatEngine {
  const tokenDelayMs = options.tokenDelayMs ?? 25;
  return {
    name: 'offline',
    async *stream(req: ChatRequest): AsyncGenerator<ChatChunk> {
      const promptTokens = countMessageTokens(req.messages);
      let produced = '';
      if (!req.signal.aborted) {
        for (const piece of splitIntoPieces(composeOfflineReply(req.messages))) {
          await sleep(tokenDelayMs, req.signal);
          if (req.signal.aborted) break;
          // A real model stops at maxTokens too; the reservation taken before streaming counts on it.
          if (countTokens(produced + piece) > req.maxTokens) break;
          produced += piece;
          yield { type: 'delta', content: piece };
        }
      }
      yield { type: 'usage', promptTokens, completionTokens: countTokens(produced) };
    },
  };
}
