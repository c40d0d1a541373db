import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../../server/app';
import { parseConfig } from '../../../server/config';
import { JobQueue, type JobHandler } from '../../../server/jobs/queue';
import { JOB_KINDS, type JobKind } from '../../../src/domain/jobs';
import { pglite } from '../helpers';

/**
 * Issue #42: an instance refuses to start when a job kind of JOB_KINDS has no handler, with a
 * message naming the kind. Such an instance would take that kind's jobs off the line every
 * instance shares and fail them. The image and portrait features register the handlers; here
 * the one for `kind` is not registered, as when its feature forgets to.
 */
describe('a job kind without a handler', () => {
  afterEach(() => vi.restoreAllMocks());

  it.each(JOB_KINDS)('the instance refuses to start when "%s" has none, naming it', async (kind) => {
    // Called below with the queue as `this`, as the method it is.
    // eslint-disable-next-line @typescript-eslint/unbound-method
    const register = JobQueue.prototype.register;
    vi.spyOn(JobQueue.prototype, 'register').mockImplementation(function (
      this: JobQueue,
      registered: JobKind,
      handler: JobHandler,
    ) {
      if (registered !== kind) register.call(this, registered, handler);
    });
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'imagegen-handlers-'));
    const config = parseConfig(
      {
        NODE_ENV: 'test',
        LOG_LEVEL: 'silent',
        DATA_DIR: dataDir,
        GENERATION_RECONCILE_INTERVAL_MS: '0',
        PAYMENTS_RECONCILE_INTERVAL_MS: '0',
        SUBSCRIPTION_RENEWAL_INTERVAL_MS: '0',
        SHUTDOWN_GRACE_MS: '0',
      },
      { webDir: undefined },
    );
    const database = await pglite.open();
    try {
      const app = await buildApp({ config, database, cookieSecret: randomBytes(32).toString('base64url') });
      try {
        await expect(app.server.ready()).rejects.toThrow(`no handler for the job kind "${kind}"`);
      } finally {
        await app.server.close();
      }
    } finally {
      await database.close();
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });
});
