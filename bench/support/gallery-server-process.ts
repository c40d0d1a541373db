import { performance } from 'node:perf_hooks';
import { sql } from 'drizzle-orm';
import { imagePage, searchImages } from '../../server/images/repository';
import { startBenchApp } from './app';
import { serveParent } from './parent';

/**
 * The app as `npm start` runs it (PGlite on disk), with the offline image engine, plus
 * what the gallery benchmark needs inside the same process: seeding a million image rows
 * in one statement, and timing the gallery's own repository queries bare, on the same
 * database the app reads.
 */
const app = await startBenchApp({ STARTER_TOKENS: '1000000' });
const db = app.database.db;

const WORDS = ['fox', 'castle', 'ocean', 'forest', 'city', 'dragon', 'portrait', 'mountain', 'robot', 'garden'];

serveParent(async (request) => {
  if (request.type === 'ready') return null;
  if (request.type === 'seed') {
    const { userId, total, own } = request as unknown as { userId: number; total: number; own: number };
    const start = performance.now();
    // Nine other users own the rest, so the user's rows are a tenth of the table. Every
    // tenth row is the user's, so the word is chosen by g / 10: each word is in a tenth of
    // everyone's prompts, the user's too.
    await db.execute(sql`
      insert into users (issuer, subject, email)
      select 'bench', 'other-' || g, 'other-' || g || '@example.com' from generate_series(1, 9) g
    `);
    const words = sql.raw(`array['${WORDS.join("','")}']`);
    await db.execute(sql`
      insert into images (user_id, file_name, prompt, width, height, size, file_size, mime_type, model,
                          created_at, updated_at)
      select case when g % ${Math.round(total / own)} = 0 then ${userId}
                  else (select min(id) from users where issuer = 'bench') + g % 9 end,
             md5(g::text) || '.png',
             'a ' || (${words})[1 + (g / 10) % 10] || ' at dusk, variation ' || g || ' ' || md5((g * 7)::text),
             1024, 1024, '1024x1024', 1500000, 'image/png', 'core',
             now() - make_interval(secs => g), now() - make_interval(secs => g)
      from generate_series(1, ${total}) g
    `);
    await db.execute(sql`analyze images`);
    return { ms: performance.now() - start };
  }
  if (request.type === 'bare') {
    const { userId, limit, page, q } = request as unknown as {
      userId: number;
      limit: number;
      page: number;
      q?: string;
    };
    const offset = (page - 1) * limit;
    const start = performance.now();
    if (q === undefined) {
      await imagePage(db, userId, limit, offset);
    } else {
      await searchImages(db, userId, limit, offset, q);
    }
    return performance.now() - start;
  }
  throw new Error(`unknown request ${request.type}`);
});
