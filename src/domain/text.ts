import { z } from 'zod';
import { INVALID_TEXT_MESSAGE, type ErrorCode } from './errors';

/**
 * Stored text, the one way: how a length is counted and which characters a stored text
 * may hold. The browser's counters, the route schemas and the provider adapters all use
 * these, so a limit is checked the same way before anything is charged.
 */

/**
 * The length of a text in Unicode code points: what a person counts as characters for
 * nearly every script (an emoji is 1, not the 2 UTF-16 units `String.length` gives).
 */
export function textLength(text: string): number {
  let n = 0;
  for (const _ of text) n += 1;
  return n;
}

/** Error codes a stored-text check reports (src/domain/errors.ts maps them to a status). */
export const TEXT_ERROR_CODES = { invalidCharacters: 'INVALID_TEXT' } as const satisfies Record<string, ErrorCode>;

export const textMessages = {
  invalidCharacters: INVALID_TEXT_MESSAGE,
  notText: 'Must be text',
} as const;

// C0 controls except tab, line feed and carriage return; DEL; C1 controls. PostgreSQL
// refuses NUL outright, and the rest have no business in a prompt, a message or a title.
// eslint-disable-next-line no-control-regex -- matching control characters is the point.
const MULTILINE_FORBIDDEN = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;
// A single-line text (a title) refuses tab, line feed and carriage return too.
// eslint-disable-next-line no-control-regex -- as above.
const SINGLE_LINE_FORBIDDEN = /[\u0000-\u001f\u007f-\u009f]/;
// A UTF-16 surrogate without its pair: not a character, and not valid UTF-8 once stored.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

// Bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069): in a
// one-line label shown among others (a title) they reorder what follows, so a right-to-left
// override makes "gpj.exe" read as "exe.jpg".
const BIDI_CONTROL = /[\u202a-\u202e\u2066-\u2069]/;
// Characters that take no room on screen: the soft hyphen, combining grapheme joiner,
// Arabic letter mark, Hangul fillers, Khmer inherent vowels, Mongolian variation selectors
// and vowel separator, zero-width spaces, joiners and direction marks, bidi controls, word
// joiner and invisible operators, variation selectors, the byte-order mark. As code point
// ranges: several are combining marks, which a regular expression's class would misread.
const INVISIBLE_RANGES: ReadonlyArray<readonly [number, number]> = [
  [0x00ad, 0x00ad],
  [0x034f, 0x034f],
  [0x061c, 0x061c],
  [0x115f, 0x1160],
  [0x17b4, 0x17b5],
  [0x180b, 0x180f],
  [0x200b, 0x200f],
  [0x202a, 0x202e],
  [0x2060, 0x206f],
  [0x3164, 0x3164],
  [0xfe00, 0xfe0f],
  [0xfeff, 0xfeff],
  [0xffa0, 0xffa0],
];

function isInvisible(char: string): boolean {
  const code = char.codePointAt(0) ?? 0;
  return INVISIBLE_RANGES.some(([from, to]) => code >= from && code <= to);
}

/** Whether the text holds only characters a stored text may hold. */
export function isStorableText(text: string, multiline: boolean): boolean {
  if (!multiline && BIDI_CONTROL.test(text)) return false;
  return !(multiline ? MULTILINE_FORBIDDEN : SINGLE_LINE_FORBIDDEN).test(text) && !LONE_SURROGATE.test(text);
}

/** The text without bidirectional controls (see BIDI_CONTROL), for a label made from free text. */
export function withoutBidiControls(text: string): string {
  return text.replace(new RegExp(BIDI_CONTROL.source, 'g'), '');
}

/** Whether anything of the text shows: not only spaces and characters of no width. */
export function hasVisibleText(text: string): boolean {
  for (const char of text) if (char.trim() !== '' && !isInvisible(char)) return true;
  return false;
}

export interface StoredTextOptions {
  /** Most code points allowed (textLength). */
  max: number;
  /** Textareas keep newlines and tabs; single-line inputs (titles) refuse them. */
  multiline: boolean;
  /** The message when `max` is passed. */
  tooLong: string;
  /** Set to refuse a missing or blank text with this message (checked first). */
  required?: string;
  /** The message when the value is not a string at all. */
  notText?: string;
  /** The message when the value is missing (undefined or null); defaults to `required`, then `notText`. */
  missing?: string;
  /** Trim before every check (the stored value is trimmed). */
  trim?: boolean;
}

/**
 * A zod string schema for text that gets stored: optionally required, free of control
 * characters (newline and tab allowed where a person types them), at most `max` code
 * points. The control-character issue carries `params.code` = INVALID_TEXT, which the
 * server's error handler answers with that code.
 */
export function storedText(options: StoredTextOptions) {
  const { required, notText = textMessages.notText } = options;
  const missing = options.missing ?? required ?? notText;
  let schema = z.string({
    error: (issue) => (issue.input === undefined || issue.input === null ? missing : notText),
  });
  if (options.trim) schema = schema.trim();
  if (required !== undefined) schema = schema.refine((v) => v.trim() !== '', { error: required, abort: true });
  return schema
    .refine((v) => isStorableText(v, options.multiline), {
      error: textMessages.invalidCharacters,
      params: { code: TEXT_ERROR_CODES.invalidCharacters },
      abort: true,
    })
    .refine((v) => textLength(v) <= options.max, { error: options.tooLong });
}

/** The app error code a zod issue asks for, when it asks for one (see storedText). */
export function issueErrorCode(issue: unknown): string | undefined {
  if (typeof issue !== 'object' || issue === null) return undefined;
  const params = (issue as { params?: unknown }).params;
  if (typeof params !== 'object' || params === null) return undefined;
  const code = (params as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}
