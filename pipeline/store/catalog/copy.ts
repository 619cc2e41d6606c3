// Moving a deployment: copies an embedded catalog (the DuckDB file) into a PostgreSQL catalog with
// the same ids, hashed keys, watchlists, portfolios, rebalance failures and id map. Rows already
// there (by primary key) are kept, so a second copy adds nothing; the sequences move past the
// copied ids. One PostgreSQL transaction: all of it or nothing; running replicas reload on NOTIFY.
import pg from "pg";
import { rows } from "../duck/duck.ts";
import type { EmbeddedCatalog } from "./embedded.ts";
import { migrate } from "./pg-migrations.ts";

/** Each table with its columns in order, parents before children (keys need their user). */
const TABLES = {
  users: ["id", "email", "first_name", "last_name", "phone", "created_at"],
  api_keys: ["id", "user_id", "key_hash", "hint", "scopes", "created_at", "revoked_at"],
  watchlists: ["id", "owner_id", "name", "description", "private", "created_at"],
  watchlist_items: ["watchlist_id", "ticker", "position", "added_at"],
  user_portfolios: ["id", "owner_id", "created_at", "updated_at", "rules"],
  rebalance_failures: ["portfolio_id", "requested_at", "failed_at", "reason"],
  id_map: ["kind", "name", "id"],
} as const;
type Table = keyof typeof TABLES;

/** The sequence that numbers each table's ids. */
const SEQUENCES: [string, Table][] = [
  ["seq_user", "users"],
  ["seq_watchlist", "watchlists"],
  ["seq_portfolio", "user_portfolios"],
];

export type CopyReport = Record<Table, { read: number; copied: number }>;

/** Copies `from` into the PostgreSQL database at `url` (migrated first); what was read and what was new. */
export async function copyCatalog(from: EmbeddedCatalog, url: string): Promise<CopyReport> {
  const source = await from.tx(async (conn) => {
    const out = {} as Record<Table, Record<string, unknown>[]>;
    for (const [t, cols] of Object.entries(TABLES) as [Table, readonly string[]][])
      out[t] = await rows(conn, `select ${cols.join(", ")} from ${t}`);
    return out;
  });
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await migrate(client);
    await client.query("begin");
    const report = {} as CopyReport;
    for (const [t, cols] of Object.entries(TABLES) as [Table, readonly string[]][]) {
      const marks = cols.map((_, i) => `$${i + 1}`).join(", ");
      const sql = `insert into ${t} (${cols.join(", ")}) values (${marks}) on conflict do nothing`;
      let copied = 0;
      for (const r of source[t])
        copied +=
          (
            await client.query(
              sql,
              cols.map((c) => r[c]),
            )
          ).rowCount ?? 0;
      report[t] = { read: source[t].length, copied };
    }
    for (const [seq, t] of SEQUENCES) await moveSequencePast(client, seq, t);
    const v = await client.query<{ v: string }>("update catalog_version set v = v + 1 returning v");
    await client.query("select pg_notify('catalog', $1)", [v.rows[0].v]);
    await client.query("commit");
    return report;
  } catch (e) {
    await client.query("rollback").catch(() => undefined);
    throw e;
  } finally {
    await client.end();
  }
}

/** Sets `seq` so its next value is past every numeric id of `table` (never back). */
async function moveSequencePast(client: pg.Client, seq: string, table: Table): Promise<void> {
  const [{ m }] = (
    await client.query<{ m: string | null }>(`select max(id::bigint) m from ${table} where id ~ '^[0-9]+$'`)
  ).rows;
  if (m === null) return;
  await client.query(
    "select setval($1::regclass, greatest($2::bigint, coalesce(pg_sequence_last_value($1::regclass), 0)))",
    [seq, m],
  );
}
