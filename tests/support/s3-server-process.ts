/**
 * An S3-protocol server on loopback, in a process of its own (@20minutes/s3rver, the
 * maintained fork of s3rver, storing objects in a temporary folder). Started by
 * `startS3Server()`; prints nothing, answers the parent over IPC with its port.
 */
import { createServer } from 'node:http';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import S3rver from '@20minutes/s3rver';

const require = createRequire(import.meta.url);
// s3rver drops the trailing slash of a bucket-level path ("/bucket/") before it rebuilds
// the canonical request, so every bucket-level call (HeadBucket, ListObjectsV2) that the
// AWS SDK signs over "/bucket/" fails its signature check. The front server below marks
// such requests, and the signer puts the slash back: signatures are still checked.
const v4 = require('@20minutes/s3rver/lib/signature/v4.js') as {
  getStringToSign: (canonical: { uri: string; headers: Record<string, string> }, request: unknown) => string;
};
const TRAILING_SLASH = 'x-test-trailing-slash';
const getStringToSign = v4.getStringToSign;
v4.getStringToSign = (canonical, request) =>
  getStringToSign(
    canonical.headers[TRAILING_SLASH] && !canonical.uri.endsWith('/')
      ? { ...canonical, uri: `${canonical.uri}/` }
      : canonical,
    request,
  );

const bucket = process.env.S3_TEST_BUCKET ?? 'images';
const directory = await fs.mkdtemp(path.join(os.tmpdir(), 's3-server-'));
const s3 = new S3rver({
  silent: true,
  directory,
  configureBuckets: [{ name: bucket, configs: [] }],
  // Same keys as the tests configure: requests are signed and checked.
  // (s3rver's one account is S3RVER/S3RVER.)
});
await s3.configureBuckets();
const callback = s3.getMiddleware();
const server = createServer((request, response) => {
  const pathname = (request.url ?? '/').split('?')[0] ?? '/';
  if (/^\/[^/]+\/$/.test(pathname)) request.headers[TRAILING_SLASH] = '1';
  callback(request, response);
});
await new Promise<void>((resolve) => server.listen(Number(process.env.S3_TEST_PORT ?? 0), '127.0.0.1', resolve));
const address = server.address();
const port = address && typeof address === 'object' ? address.port : 0;

const stop = async () => {
  server.closeAllConnections();
  server.close();
  await fs.rm(directory, { recursive: true, force: true });
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('disconnect', () => void stop());
process.send?.({ port, bucket });
