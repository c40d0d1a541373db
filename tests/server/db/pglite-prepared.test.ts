import { PGlite } from '@electric-sql/pglite';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { withPreparedStatements } from '../../../server/db/pglite-prepared';

describe('PGlite with prepared statements', () => {
  let raw: PGlite;
  let db: PGlite;
  // A new database for every test, copied from one made once (a new cluster costs seconds).
  let template: Blob;

  beforeAll(async () => {
    const base = await PGlite.create();
    await base.exec('create table t (id serial primary key, name text not null unique, at timestamptz, meta jsonb)');
    template = await base.dumpDataDir('none');
    await base.close();
  });
  beforeEach(async () => {
    raw = await PGlite.create({ loadDataDir: template });
    db = withPreparedStatements(raw, 3);
  });
  afterEach(async () => {
    await raw.close();
  });

  const preparedCount = async () =>
    (await raw.query<{ n: number }>('select count(*)::int as n from pg_prepared_statements')).rows[0]?.n;

  it('answers like PGlite itself, parameters and types included', async () => {
    const at = new Date('2026-11-23T10:00:00.000Z');
    const insert = 'insert into t (name, at, meta) values ($1, $2, $3) returning *';
    const mine = await db.query(insert, ['a', at, { k: [1, 'x'] }]);
    const theirs = await raw.query(insert, ['b', at, { k: [1, 'x'] }]);
    expect(mine.rows).toEqual([{ id: 1, name: 'a', at, meta: { k: [1, 'x'] } }]);
    expect(mine.fields).toEqual(theirs.fields);
    expect(mine.affectedRows).toBe(1);
    const select = 'select id, name, at, meta from t where name = any($1) and ($2::int is null or id > $2) order by id';
    expect(await db.query(select, [['a', 'b'], null], { rowMode: 'array' })).toEqual(
      await raw.query(select, [['a', 'b'], null], { rowMode: 'array' }),
    );
  });

  it('prepares each text once and closes the least recently used beyond its capacity', async () => {
    for (let i = 0; i < 5; i++) await db.query('select $1::int + 1 as n', [i]);
    expect(await preparedCount()).toBe(1);
    await db.query('select $1::int + 2 as n', [1]);
    await db.query('select $1::int + 3 as n', [1]);
    await db.query('select $1::int + 1 as n', [1]); // used again: now the newest
    await db.query('select $1::int + 4 as n', [1]); // evicts "+ 2"
    expect(await preparedCount()).toBe(3);
    const texts = (await raw.query<{ statement: string }>('select statement from pg_prepared_statements')).rows;
    expect(texts.map((r) => r.statement).sort()).toEqual(
      ['select $1::int + 1 as n', 'select $1::int + 3 as n', 'select $1::int + 4 as n'].sort(),
    );
    expect((await db.query<{ n: number }>('select $1::int + 2 as n', [5])).rows).toEqual([{ n: 7 }]);
  });

  it('reports errors like PGlite and keeps the session usable', async () => {
    await expect(db.query('selec $1', [1])).rejects.toThrow(/syntax error/);
    expect(await preparedCount()).toBe(0);
    const insert = 'insert into t (name) values ($1)';
    await db.query(insert, ['x']);
    await expect(db.query(insert, ['x'])).rejects.toMatchObject({ code: '23505' });
    await db.query(insert, ['y']);
    expect((await db.query('select name from t where id > $1 order by id', [0])).rows).toEqual([
      { name: 'x' },
      { name: 'y' },
    ]);
  });

  it('runs inside transactions, which commit or roll back as a whole', async () => {
    const insert = 'insert into t (name) values ($1)';
    await db.transaction(async (tx) => {
      await tx.query(insert, ['kept']);
    });
    await expect(
      db.transaction(async (tx) => {
        await tx.query(insert, ['undone']);
        await tx.query(insert, ['kept']);
      }),
    ).rejects.toMatchObject({ code: '23505' });
    expect((await db.query('select name from t where id > $1', [0])).rows).toEqual([{ name: 'kept' }]);
  });

  it('keeps a statement outside an open transaction out of it', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let inserted!: () => void;
    const insertedInside = new Promise<void>((resolve) => (inserted = resolve));
    const open = db.transaction(async (tx) => {
      await tx.query('insert into t (name) values ($1)', ['in']);
      inserted();
      await held;
      await tx.rollback();
    });
    await insertedInside;
    // Sent while the transaction is open: it must wait, not join it and be rolled back.
    const outside = db.query('insert into t (name) values ($1)', ['out']);
    await new Promise((resolve) => setTimeout(resolve, 20));
    release();
    await open;
    await outside;
    expect((await db.query('select name from t where id > $1', [0])).rows).toEqual([{ name: 'out' }]);
  });
});
