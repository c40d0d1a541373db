import { describe, expect, it } from 'vitest';
import { downloadFileName, formatFileSize } from '../../src/domain/format';

describe('formatFileSize', () => {
  it.each([
    [0, '0.00 KB'],
    [1, '0.00 KB'],
    [512, '0.50 KB'],
    [1024, '1.00 KB'],
    [524288, '512.00 KB'],
    [1_024_000, '1000.00 KB'],
    [1048575, '1024.00 KB'],
    [1048576, '1.00 MB'],
    [1572864, '1.50 MB'],
    [10 * 1024 * 1024, '10.00 MB'],
    [5 * 1024 * 1024 * 1024, '5120.00 MB'],
  ])('%d bytes -> %s', (bytes, expected) => {
    expect(formatFileSize(bytes)).toBe(expected);
  });
});

describe('downloadFileName', () => {
  it('is imagegen_{id}_{fileName}.jpg', () => {
    expect(downloadFileName(42, 'abc123.png')).toBe('imagegen_42_abc123.png.jpg');
    expect(downloadFileName('7', 'x')).toBe('imagegen_7_x.jpg');
  });
});
