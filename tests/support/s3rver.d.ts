// The parts of @20minutes/s3rver (it ships no types) that the S3 test server uses.
declare module '@20minutes/s3rver' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  interface S3rverOptions {
    silent?: boolean;
    directory: string;
    configureBuckets?: { name: string; configs: string[] }[];
  }

  export default class S3rver {
    constructor(options: S3rverOptions);
    configureBuckets(): Promise<void>;
    getMiddleware(): (request: IncomingMessage, response: ServerResponse) => void;
  }
}
