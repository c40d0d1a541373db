import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pglite, startTestApp, type TestApp } from '../helpers';

interface Operation {
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Record<string, unknown> }> };
  responses?: Record<string, unknown>;
}

/**
 * Issue #42: the portrait endpoint is the one whose body is a multipart form; the API
 * description at /api/openapi.json shows it as the request body, with the photo as a file,
 * like every other endpoint's body (SPEC section 7's fields).
 */
describe('the portrait endpoint in the API description', () => {
  let app: TestApp;
  let operation: Operation | undefined;

  beforeAll(async () => {
    app = await startTestApp(pglite);
    const doc = (await (await fetch(`${app.url}/api/openapi.json`)).json()) as {
      paths: Record<string, Record<string, Operation>>;
    };
    operation = doc.paths['/api/face-swap/generate']?.post;
  });
  afterAll(async () => {
    await app.close();
  });

  it('has the multipart form as its body: the prompt required, the photo a binary file, nothing else', () => {
    expect(operation?.requestBody?.required).toBe(true);
    expect(Object.keys(operation?.requestBody?.content ?? {})).toEqual(['multipart/form-data']);
    const schema = operation?.requestBody?.content?.['multipart/form-data']?.schema;
    expect(schema).toMatchObject({
      type: 'object',
      required: ['prompt'],
      additionalProperties: false,
      properties: {
        prompt: { type: 'string' },
        user_image_file: { type: 'string', format: 'binary' },
        user_image: { type: 'string' },
        aspect_ratio: { enum: ['1:1', '16:9', '2:3', '3:2', '4:5', '5:4'] },
        // SPEC section 3's style presets.
        style_preset: {
          enum: [
            'none',
            'anime',
            'cinematic',
            'digital-art',
            'enhance',
            'fantasy-art',
            'isometric',
            'line-art',
            'low-poly',
            'modeling-compound',
            'neon-punk',
            'origami',
            'photographic',
            'pixel-art',
            'tile-texture',
          ],
        },
        output_format: { enum: ['webp', 'png', 'jpeg'] },
      },
    });
    expect(Object.keys((schema?.properties as object | undefined) ?? {}).sort()).toEqual(
      ['aspect_ratio', 'output_format', 'prompt', 'style_preset', 'user_image', 'user_image_file'].sort(),
    );
  });

  it('declares the success and each refusal the tests see it give', () => {
    expect(Object.keys(operation?.responses ?? {})).toEqual(
      expect.arrayContaining(['200', '400', '401', '402', '403', '409', '413', '415', '422', '429', '502', '504']),
    );
  });
});
