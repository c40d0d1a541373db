/**
 * A 5x7 bitmap font drawn as SVG rectangles. The offline renderer uses it instead of SVG
 * <text> so its bytes do not depend on which fonts the machine has installed: the same
 * job gives the same picture on a laptop, in CI and in a slim container.
 */

const GLYPH_WIDTH = 5;
const GLYPH_HEIGHT = 7;

// Each glyph is seven rows of five cells, top to bottom, 1 = ink.
const GLYPH_ROWS: Record<string, string> = {
  A: '01110 10001 10001 11111 10001 10001 10001',
  B: '11110 10001 10001 11110 10001 10001 11110',
  C: '01110 10001 10000 10000 10000 10001 01110',
  D: '11100 10010 10001 10001 10001 10010 11100',
  E: '11111 10000 10000 11110 10000 10000 11111',
  F: '11111 10000 10000 11110 10000 10000 10000',
  G: '01110 10001 10000 10111 10001 10001 01111',
  H: '10001 10001 10001 11111 10001 10001 10001',
  I: '01110 00100 00100 00100 00100 00100 01110',
  J: '00111 00010 00010 00010 00010 10010 01100',
  K: '10001 10010 10100 11000 10100 10010 10001',
  L: '10000 10000 10000 10000 10000 10000 11111',
  M: '10001 11011 10101 10101 10001 10001 10001',
  N: '10001 10001 11001 10101 10011 10001 10001',
  O: '01110 10001 10001 10001 10001 10001 01110',
  P: '11110 10001 10001 11110 10000 10000 10000',
  Q: '01110 10001 10001 10001 10101 10010 01101',
  R: '11110 10001 10001 11110 10100 10010 10001',
  S: '01111 10000 10000 01110 00001 00001 11110',
  T: '11111 00100 00100 00100 00100 00100 00100',
  U: '10001 10001 10001 10001 10001 10001 01110',
  V: '10001 10001 10001 10001 10001 01010 00100',
  W: '10001 10001 10001 10101 10101 10101 01010',
  X: '10001 10001 01010 00100 01010 10001 10001',
  Y: '10001 10001 10001 01010 00100 00100 00100',
  Z: '11111 00001 00010 00100 01000 10000 11111',
  '0': '01110 10001 10011 10101 11001 10001 01110',
  '1': '00100 01100 00100 00100 00100 00100 01110',
  '2': '01110 10001 00001 00010 00100 01000 11111',
  '3': '11111 00010 00100 00010 00001 10001 01110',
  '4': '00010 00110 01010 10010 11111 00010 00010',
  '5': '11111 10000 11110 00001 00001 10001 01110',
  '6': '00110 01000 10000 11110 10001 10001 01110',
  '7': '11111 00001 00010 00100 01000 01000 01000',
  '8': '01110 10001 10001 01110 10001 10001 01110',
  '9': '01110 10001 10001 01111 00001 00010 01100',
  ' ': '00000 00000 00000 00000 00000 00000 00000',
  '.': '00000 00000 00000 00000 00000 01100 01100',
  ',': '00000 00000 00000 00000 01100 00100 01000',
  '!': '00100 00100 00100 00100 00100 00000 00100',
  '?': '01110 10001 00001 00010 00100 00000 00100',
  '-': '00000 00000 00000 11111 00000 00000 00000',
  "'": '00100 00100 01000 00000 00000 00000 00000',
  '"': '01010 01010 00000 00000 00000 00000 00000',
  ':': '00000 01100 01100 00000 01100 01100 00000',
  ';': '00000 01100 01100 00000 01100 00100 01000',
  '(': '00010 00100 01000 01000 01000 00100 00010',
  ')': '01000 00100 00010 00010 00010 00100 01000',
  '/': '00000 00001 00010 00100 01000 10000 00000',
  '&': '01100 10010 10100 01000 10101 10010 01101',
  '+': '00000 00100 00100 11111 00100 00100 00000',
  '=': '00000 00000 11111 00000 11111 00000 00000',
  '*': '00000 00100 10101 01110 10101 00100 00000',
  '#': '01010 01010 11111 01010 11111 01010 01010',
  '%': '11000 11001 00010 00100 01000 10011 00011',
  _: '00000 00000 00000 00000 00000 00000 11111',
  '@': '01110 10001 00001 01101 10101 10101 01110',
  // Cyrillic letters whose capitals differ from Latin ones (the interface defaults to Russian).
  Б: '11111 10000 10000 11110 10001 10001 11110',
  Г: '11111 10000 10000 10000 10000 10000 10000',
  Д: '00110 01010 01010 01010 01010 11111 10001',
  Ж: '10101 10101 10101 01110 10101 10101 10101',
  З: '01110 10001 00001 00110 00001 10001 01110',
  И: '10001 10001 10011 10101 11001 10001 10001',
  Й: '01010 00100 10001 10011 10101 11001 10001',
  Л: '00111 01001 01001 01001 01001 01001 10001',
  П: '11111 10001 10001 10001 10001 10001 10001',
  У: '10001 10001 10001 01111 00001 10001 01110',
  Ф: '00100 01110 10101 10101 10101 01110 00100',
  Ц: '10010 10010 10010 10010 10010 11111 00001',
  Ч: '10001 10001 10001 01111 00001 00001 00001',
  Ш: '10101 10101 10101 10101 10101 10101 11111',
  Щ: '10101 10101 10101 10101 10101 11111 00001',
  Ъ: '11000 01000 01000 01110 01001 01001 01110',
  Ы: '10001 10001 10001 11101 10011 10011 11101',
  Ь: '10000 10000 10000 11110 10001 10001 11110',
  Э: '01110 10001 00001 00111 00001 10001 01110',
  Ю: '10010 10101 10101 11101 10101 10101 10010',
  Я: '01111 10001 10001 01111 00101 01001 10001',
  Ё: '01010 00000 11111 10000 11110 10000 11111',
};

// Cyrillic capitals that look exactly like Latin ones reuse those glyphs.
const LOOKALIKES: Record<string, string> = {
  А: 'A',
  В: 'B',
  Е: 'E',
  К: 'K',
  М: 'M',
  Н: 'H',
  О: 'O',
  Р: 'P',
  С: 'C',
  Т: 'T',
  Х: 'X',
};

const GLYPHS = new Map<string, readonly string[]>(
  Object.entries(GLYPH_ROWS).map(([char, rows]) => [char, rows.split(' ')]),
);

function glyphFor(char: string): readonly string[] {
  const upper = char.toUpperCase();
  return GLYPHS.get(LOOKALIKES[upper] ?? upper) ?? GLYPHS.get('?') ?? [];
}

/** Characters as the font will draw them: upper case, unknown ones as "?". */
export function normaliseForFont(text: string): string {
  return Array.from(text)
    .map((char) => {
      const upper = char.toUpperCase();
      const mapped = LOOKALIKES[upper] ?? upper;
      return GLYPHS.has(mapped) ? mapped : '?';
    })
    .join('');
}

/** Width in cells of a line of text: 5 per glyph plus 1 between glyphs. */
export function textCellWidth(text: string): number {
  const length = Array.from(text).length;
  return length === 0 ? 0 : length * (GLYPH_WIDTH + 1) - 1;
}

export const TEXT_CELL_HEIGHT = GLYPH_HEIGHT;

/**
 * SVG path data drawing the text with its top-left corner at (x, y), each font cell
 * `scale` pixels square. Runs of ink in a row become one rectangle to keep the path short.
 */
export function textPath(text: string, x: number, y: number, scale: number): string {
  const parts: string[] = [];
  let originX = x;
  for (const char of Array.from(text)) {
    const rows = glyphFor(char);
    rows.forEach((row, rowIndex) => {
      let column = 0;
      while (column < row.length) {
        if (row[column] !== '1') {
          column += 1;
          continue;
        }
        const start = column;
        while (column < row.length && row[column] === '1') column += 1;
        const left = originX + start * scale;
        const top = y + rowIndex * scale;
        parts.push(`M${left} ${top}h${(column - start) * scale}v${scale}h${-(column - start) * scale}z`);
      }
    });
    originX += (GLYPH_WIDTH + 1) * scale;
  }
  return parts.join('');
}
