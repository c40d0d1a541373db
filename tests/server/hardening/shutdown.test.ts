import fs from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { pglite, startTestApp } from '../helpers';
import { until } from '../chat/helpers';
import { balance, expectLedgerConsistent, requestsOf, signedInUser } from '../images/support';
import { heldImageProvider } from '../jobs/support';

// A graceful shutdown (SIGTERM, docs/operations.md) lets the requests in flight finish within
// SHUTDOWN_GRACE_MS. A response finished while the server is closing says `Connection: close`
// (RFC 9112, section 9.6: a server that is closing the connection sends it), so a client or a
// load balancer with keep-alive does not hold the socket open, and the server exits as soon as
// its last request is answered rather than when the grace period runs out.
describe('a graceful shutdown', () => {
  it('answers the requests in flight, each with Connection: close, and closes as soon as they are done', async () => {
    const provider = heldImageProvider();
    const app = await startTestApp(pglite, { SHUTDOWN_GRACE_MS: '30000' }, {}, { providers: { images: provider } });
    const user = await signedInUser(app, 'shutdown@example.com');
    // Node's fetch keeps the connection alive, as a load balancer in front would.
    const answer = fetch(`${app.url}/api/stability/text-to-image`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: app.url, cookie: user.jar.header() },
      body: JSON.stringify({ prompt: 'in flight at shutdown', width: 1024, height: 1024 }),
    });
    await until(async () => (provider.held.length === 1 ? true : undefined));

    const started = Date.now();
    const closed = app.server.close();
    await until(async () => (app.server.server.listening ? undefined : true));
    provider.releaseAll();
    const reply = await answer;
    expect(reply.status).toBe(200);
    expect(reply.headers.get('connection')).toBe('close');
    expect(await reply.json()).toMatchObject({ success: true });
    await closed;
    // Well inside the 30 s of grace: nothing held the server open after the last answer.
    expect(Date.now() - started).toBeLessThan(15_000);
    await app.database.close();
    await fs.rm(app.config.dataDir, { recursive: true, force: true });
  }, 60_000);

  // docs/operations.md, "Rolling restarts" and the outside-services table: a job still at its
  // provider when the grace period is over is stopped there and refunded before the server
  // has closed; one that finishes within the grace is kept and paid.
  it('gives running jobs the grace period, then stops the rest at their provider and refunds them', async () => {
    const provider = heldImageProvider();
    const app = await startTestApp(
      pglite,
      { SHUTDOWN_GRACE_MS: '3000', JOBS_SLOTS_IMAGES: '2', STARTER_TOKENS: '50' },
      {},
      { providers: { images: provider } },
    );
    const user = await signedInUser(app, 'restart@example.com');
    const post = (prompt: string) =>
      fetch(`${app.url}/api/stability/text-to-image`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: app.url, cookie: user.jar.header() },
        body: JSON.stringify({ prompt, width: 1024, height: 1024 }),
      }).catch((error: unknown) => error);
    const answers = [post('finishes in the grace'), post('outlasts the grace')];
    await until(async () => (provider.held.length === 2 ? true : undefined));
    expect(await balance(app, user)).toBe(46);

    const closed = app.server.close();
    await until(async () => (app.server.server.listening ? undefined : true));
    provider.held.find((call) => call.prompt === 'finishes in the grace')?.release();
    await closed;
    await Promise.all(answers);
    expect(provider.aborted).toEqual(['outlasts the grace']);
    const rows = await requestsOf(app, user);
    const byPrompt = Object.fromEntries(rows.map((row) => [row.prompt, row]));
    expect(byPrompt['finishes in the grace']).toMatchObject({ status: 'COMPLETED' });
    expect(byPrompt['outlasts the grace']).toMatchObject({
      status: 'FAILED',
      errorCode: 'SERVICE_UNAVAILABLE',
      errorMessage: 'The server restarted before the job finished; your tokens were refunded',
    });
    expect(await balance(app, user)).toBe(48);
    await expectLedgerConsistent(app, user);
    expect(byPrompt['outlasts the grace']?.finishedAt).not.toBeNull();
    await app.database.close();
    await fs.rm(app.config.dataDir, { recursive: true, force: true });
  }, 60_000);
});
