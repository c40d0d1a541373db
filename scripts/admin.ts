/**
 * Operator tools: `npm run admin -- <command>`. Reads the same configuration as the
 * server (DATABASE_URL, or the embedded database under DATA_DIR; PGlite allows one
 * process at a time, so stop `npm start` first there). Exits non-zero on any failure.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { AdminService } from '../server/admin/service';
import { ConfigError, parseConfig } from '../server/config';
import { openDatabase } from '../server/db/client';
import { isAppError } from '../server/errors';
import { LedgerService } from '../server/ledger/service';

const USAGE = `Usage: npm run admin -- <command>

  grant <user> <tokens> --reason "<why>"   add tokens (a ledger row)
  take <user> <tokens> --reason "<why>"    remove tokens (refused below 0)
  ledger <user>                            the user's ledger, oldest first
  verify                                   every user's ledger sums to the balance, no balance
                                           below 0; exits 1 on any mismatch
  refunds                                  refunded payments whose tokens were already spent
                                           (what a refund could not take back)
  disable <user>                           isActive false: sessions end, sign-in is refused
  enable <user>                            isActive true again

<user> is a user id or an e-mail address.`;

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { reason: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  const [command, ...rest] = positionals;
  if (!command || values.help) {
    console.log(USAGE);
    return command || values.help ? 0 : 2;
  }
  const arity: Record<string, number> = { grant: 2, take: 2, ledger: 1, verify: 0, refunds: 0, disable: 1, enable: 1 };
  if (!(command in arity) || rest.length !== arity[command]) {
    console.error(`Unknown command or wrong arguments: ${[command, ...rest].join(' ')}\n\n${USAGE}`);
    return 2;
  }

  const config = parseConfig();
  const database = await openDatabase(
    config.DATABASE_URL
      ? { kind: 'postgres', url: config.DATABASE_URL, poolSize: 2 }
      : { kind: 'pglite', dataDir: path.join(config.dataDir, 'db') },
  );
  const admin = new AdminService(database.db, new LedgerService(database.db));
  try {
    const [user = '', amountText = ''] = rest;
    switch (command) {
      case 'grant':
      case 'take': {
        const amount = /^\d+$/.test(amountText) ? Number(amountText) : NaN;
        const done =
          command === 'grant'
            ? await admin.grant(user, amount, values.reason ?? '')
            : await admin.take(user, amount, values.reason ?? '');
        console.log(
          `${command === 'grant' ? 'Granted' : 'Took'} ${amount} tokens ${command === 'grant' ? 'to' : 'from'} user ${done.user.id} (${done.user.email}); balance now ${done.balanceAfter}`,
        );
        return 0;
      }
      case 'ledger': {
        const { user: found, entries } = await admin.ledgerOf(user);
        console.log(
          `User ${found.id} (${found.email}) ${found.isActive ? 'active' : 'DISABLED'}, balance ${found.tokensAmount}`,
        );
        for (const e of entries) {
          console.log(
            [
              e.id,
              e.createdAt.toISOString(),
              e.delta > 0 ? `+${e.delta}` : e.delta,
              `-> ${e.balanceAfter}`,
              e.reason,
              e.reference ?? '',
            ].join('\t'),
          );
        }
        return 0;
      }
      case 'verify': {
        const { checked, violations } = await admin.verify();
        for (const v of violations) {
          console.error(
            `MISMATCH user ${v.userId} (${v.email}): balance ${v.balance}, ledger sum ${v.ledgerSum}, newest balance_after ${v.lastBalanceAfter ?? 'none'}`,
          );
        }
        console.log(`${checked} users checked, ${violations.length} mismatches`);
        return violations.length === 0 ? 0 : 1;
      }
      case 'refunds': {
        const rows = await admin.unrecoveredRefunds();
        for (const r of rows) {
          console.log(
            [
              `user ${r.userId} (${r.email})`,
              `payment ${r.paymentId}`,
              `refund ${r.refundId}`,
              `${(r.refundedKopecks / 100).toFixed(2)} of ${(r.paymentKopecks / 100).toFixed(2)} RUB`,
              `taken back ${r.tokensTaken}`,
              `not taken back ${r.tokensUnrecovered}`,
            ].join('\t'),
          );
        }
        console.log(`${rows.length} refunds with tokens that could not be taken back`);
        return 0;
      }
      case 'disable': {
        const done = await admin.disable(user);
        console.log(
          `User ${done.user.id} (${done.user.email}) ${done.changed ? 'disabled' : 'was already disabled'}; ${done.sessionsEnded} sessions ended`,
        );
        return 0;
      }
      case 'enable': {
        const done = await admin.enable(user);
        console.log(`User ${done.user.id} (${done.user.email}) ${done.changed ? 'enabled' : 'was already active'}`);
        return 0;
      }
    }
    return 2;
  } finally {
    await database.close();
  }
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  if (error instanceof ConfigError || isAppError(error)) console.error(error.message);
  else console.error(error);
  process.exitCode = 1;
}
