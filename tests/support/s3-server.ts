import { fork } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface S3TestServer {
  endpoint: string;
  bucket: string;
  port: number;
  /** The S3_* variables that point the app at this server. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

/** s3rver's only account. */
export const S3_TEST_KEYS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

const here = path.dirname(fileURLToPath(import.meta.url));

/** Starts the S3-protocol server in its own process on a free loopback port. */
export async function startS3Server(bucket = 'images', port = 0): Promise<S3TestServer> {
  const child = fork(path.join(here, 's3-server-process.ts'), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, S3_TEST_BUCKET: bucket, S3_TEST_PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const started = await new Promise<{ port: number }>((resolve, reject) => {
    child.once('message', (message) => resolve(message as { port: number }));
    child.once('exit', (code) => reject(new Error(`the S3 test server exited with ${code}`)));
  });
  const endpoint = `http://127.0.0.1:${started.port}`;
  return {
    endpoint,
    bucket,
    port: started.port,
    env: {
      S3_BUCKET: bucket,
      S3_ENDPOINT: endpoint,
      S3_REGION: 'us-east-1',
      S3_ACCESS_KEY_ID: S3_TEST_KEYS.accessKeyId,
      S3_SECRET_ACCESS_KEY: S3_TEST_KEYS.secretAccessKey,
      S3_FORCE_PATH_STYLE: 'true',
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
