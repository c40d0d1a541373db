import type { Readable } from 'node:stream';
import type * as AwsS3 from '@aws-sdk/client-s3';
import type { ImageMimeType } from '../providers/images/types';
import { assertFileName, IMAGE_FILE_NAME, newFileName, type ImageStorage, type StoredFile } from './image-store';

export interface S3StorageOptions {
  bucket: string;
  endpoint?: string;
  region: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle: boolean;
  /** Upper bound of one call to the store, retries included. */
  timeoutMs?: number;
}

/**
 * Files as objects of one S3-compatible bucket, named like the local files. The AWS SDK is
 * loaded by {@link S3ImageStorage.create}, so a server on its local folder never loads it.
 */
export class S3ImageStorage implements ImageStorage {
  readonly kind = 's3';
  private readonly client: AwsS3.S3Client;
  private readonly bucket: string;
  private readonly timeoutMs: number;

  static async create(options: S3StorageOptions): Promise<S3ImageStorage> {
    return new S3ImageStorage(await import('@aws-sdk/client-s3'), options);
  }

  private constructor(
    private readonly sdk: typeof AwsS3,
    options: S3StorageOptions,
  ) {
    this.bucket = options.bucket;
    this.timeoutMs = options.timeoutMs ?? 15_000;
    this.client = new sdk.S3Client({
      region: options.region,
      endpoint: options.endpoint,
      forcePathStyle: options.forcePathStyle,
      credentials:
        options.accessKeyId && options.secretAccessKey
          ? { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey }
          : undefined,
      // Checksums only where S3 requires them: many S3-compatible stores reject the
      // newer default trailing checksums.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: 2,
    });
  }

  async save(bytes: Buffer, mimeType: ImageMimeType): Promise<{ fileName: string; fileSize: number }> {
    const fileName = newFileName(mimeType);
    await this.client.send(
      new this.sdk.PutObjectCommand({
        Bucket: this.bucket,
        Key: fileName,
        Body: bytes,
        ContentType: mimeType,
        ContentLength: bytes.length,
        // Never overwrite, however unlikely a repeated name is.
        IfNoneMatch: '*',
      }),
      { abortSignal: AbortSignal.timeout(this.timeoutMs) },
    );
    return { fileName, fileSize: bytes.length };
  }

  async remove(fileName: string): Promise<void> {
    assertFileName(fileName);
    // S3 answers a delete of a missing key with success.
    await this.client.send(new this.sdk.DeleteObjectCommand({ Bucket: this.bucket, Key: fileName }), {
      abortSignal: AbortSignal.timeout(this.timeoutMs),
    });
  }

  async open(fileName: string): Promise<StoredFile | undefined> {
    const mimeType = assertFileName(fileName);
    try {
      const object = await this.client.send(new this.sdk.GetObjectCommand({ Bucket: this.bucket, Key: fileName }), {
        abortSignal: AbortSignal.timeout(this.timeoutMs),
      });
      if (!object.Body || object.ContentLength === undefined) throw new Error(`S3 returned no body for ${fileName}`);
      return { body: object.Body as Readable, size: object.ContentLength, mimeType };
    } catch (error) {
      if (error instanceof this.sdk.NoSuchKey) return undefined;
      if (error instanceof this.sdk.S3ServiceException && error.$metadata.httpStatusCode === 404) return undefined;
      throw error;
    }
  }

  async *list(): AsyncIterable<{ fileName: string; modifiedAt: Date }> {
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new this.sdk.ListObjectsV2Command({ Bucket: this.bucket, ContinuationToken: token, MaxKeys: 1000 }),
        { abortSignal: AbortSignal.timeout(this.timeoutMs) },
      );
      for (const object of page.Contents ?? []) {
        if (object.Key && IMAGE_FILE_NAME.test(object.Key)) {
          yield { fileName: object.Key, modifiedAt: object.LastModified ?? new Date(0) };
        }
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  async check(): Promise<void> {
    await this.client.send(new this.sdk.HeadBucketCommand({ Bucket: this.bucket }), {
      abortSignal: AbortSignal.timeout(this.timeoutMs),
    });
  }

  close(): void {
    this.client.destroy();
  }
}
