import { parse, protocol, type PGlite, type QueryOptions, type Results, type Transaction } from '@electric-sql/pglite';

type BackendMessage = Awaited<ReturnType<PGlite['execProtocolStream']>>[number];

interface Prepared {
  name: string;
  paramTypes: number[];
}

/**
 * PGlite with every parameterised statement prepared once per text and then only bound
 * and executed, as postgres.js does by default and node-postgres does for named queries.
 * PGlite itself sends each query as an unnamed Parse, so PostgreSQL parses and plans it
 * on every call, and planning looks up the size of every table and index the statement
 * touches: on disk that is a file system call each. A prepared statement skips both
 * once PostgreSQL settles on a generic plan.
 *
 * Statements are kept per SQL text, the least recently used closed beyond `capacity`.
 * Prepared statements are per session and outlive transactions, which suits PGlite's
 * single session. Queries without parameters (migrations, `set`, DDL) go to PGlite as
 * they are. The result is the PGlite instance itself with `query` and `transaction`
 * replaced, so drizzle uses it unchanged.
 */
export function withPreparedStatements(client: PGlite, capacity = 200): PGlite {
  const statements = new Map<string, Prepared>();
  let nextName = 1;
  const send = (message: Uint8Array): Promise<BackendMessage[]> =>
    client.execProtocolStream(message, { syncToFs: false });

  async function prepare(text: string, options: QueryOptions | undefined): Promise<Prepared> {
    const known = statements.get(text);
    if (known) {
      // Most recently used last: the map's order is the eviction order.
      statements.delete(text);
      statements.set(text, known);
      return known;
    }
    if (statements.size >= capacity) {
      const [oldestText, oldest] = statements.entries().next().value as [string, Prepared];
      statements.delete(oldestText);
      await send(protocol.serialize.close({ type: 'S', name: oldest.name }));
    }
    const name = `pglite_prepared_${nextName++}`;
    await send(protocol.serialize.parse({ name, text, types: options?.paramTypes }));
    const described = await send(protocol.serialize.describe({ type: 'S', name }));
    const prepared = { name, paramTypes: parse.parseDescribeStatementResults(described) };
    statements.set(text, prepared);
    return prepared;
  }

  /** One statement on the session; the caller holds PGlite's query lock. */
  async function run<T>(text: string, params: unknown[], options: QueryOptions | undefined): Promise<Results<T>> {
    const messages: BackendMessage[] = [];
    try {
      const { name, paramTypes } = await prepare(text, options);
      const values = params.map((value, i) => {
        if (value === null || value === undefined) return null;
        const type = paramTypes[i] ?? 0;
        const serialize = options?.serializers?.[type] ?? client.serializers[type];
        if (serialize) return serialize(value);
        if (typeof value === 'string') return value;
        if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
        return JSON.stringify(value);
      });
      messages.push(...(await send(protocol.serialize.bind({ statement: name, values }))));
      messages.push(...(await send(protocol.serialize.describe({ type: 'P' }))));
      messages.push(...(await send(protocol.serialize.execute({}))));
    } finally {
      // Ends the extended-protocol exchange, also after an error, which PostgreSQL
      // answers by skipping everything up to here.
      messages.push(...(await send(protocol.serialize.sync())));
    }
    return parse.parseResults(messages, client.parsers, options)[0] as Results<T>;
  }

  const plain = (params: unknown[] | undefined, options: QueryOptions | undefined): boolean =>
    !params || params.length === 0 || options?.blob !== undefined;

  async function query<T>(text: string, params?: unknown[], options?: QueryOptions): Promise<Results<T>> {
    if (plain(params, options)) return client.query<T>(text, params, options);
    // The same locks as PGlite's own query: none while a transaction is open, then the
    // session for this statement alone.
    const result = await client._runExclusiveTransaction(() =>
      client._runExclusiveQuery(() => run<T>(text, params ?? [], options)),
    );
    await client.syncToFs();
    return result;
  }

  async function transaction<T>(callback: (tx: Transaction) => Promise<T>): Promise<T> {
    return client.transaction((tx) => {
      const query = tx.query.bind(tx);
      tx.query = <R>(text: string, params?: unknown[], options?: QueryOptions): Promise<Results<R>> => {
        if (tx.closed) throw new Error('Transaction is closed');
        if (plain(params, options)) return query<R>(text, params, options);
        return client._runExclusiveQuery(() => run<R>(text, params ?? [], options));
      };
      return callback(tx);
    });
  }

  return new Proxy(client, {
    get(target, property) {
      if (property === 'query') return query;
      if (property === 'transaction') return transaction;
      // PGlite keeps its state in private fields, which only answer to the real instance.
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
