// The PostgreSQL catalog's schema, as numbered migrations applied in order at start. Every process
// applies what is missing under one advisory lock, so replicas starting together migrate once.
// Caps and uniqueness are the database's: two replicas writing at once cannot pass them.
import type pg from "pg";
import { MAX_OWNED } from "./types.ts";

/** The advisory lock key of migrations (any fixed number; this one spells "catal"). */
const MIGRATION_LOCK = 0x63617461_6c;

export const MIGRATIONS: { version: number; name: string; sql: string }[] = [
  {
    version: 1,
    name: "account tables",
    // Column order as in the embedded schema (schema.ts): the shared writes insert by position.
    sql: `
create sequence seq_user start 1;
create sequence seq_watchlist start 1;
create sequence seq_portfolio start 5001;
create table users (
  id text primary key, email text not null, first_name text not null,
  last_name text not null, phone text not null, created_at timestamptz not null);
create unique index users_email_key on users (lower(email));
create table api_keys (
  id text primary key, user_id text not null references users (id), key_hash text not null unique, hint text not null,
  scopes text not null, created_at timestamptz not null, revoked_at timestamptz);
create table watchlists (
  id text primary key, owner_id text not null, name text not null, description text not null,
  private boolean not null, created_at timestamptz not null);
create table watchlist_items (
  watchlist_id text not null references watchlists (id), ticker text not null, position integer not null,
  added_at timestamptz not null, primary key (watchlist_id, ticker));
create table user_portfolios (
  id text primary key, owner_id text not null, created_at timestamptz not null, updated_at timestamptz not null,
  rules text not null);
create table rebalance_failures (
  portfolio_id text primary key, requested_at timestamptz, failed_at timestamptz not null, reason text not null);
create table id_map (kind text not null, name text not null, id integer not null, primary key (kind, name));
-- The version of the whole catalog: every write transaction adds one, so a mirror knows whether it is current.
create table catalog_version (one boolean primary key default true check (one), v bigint not null);
insert into catalog_version values (true, 0);
-- Rows each owner holds, kept by triggers: the upsert locks the row of the owner, so two transactions
-- adding the ${MAX_OWNED}th watchlist at once take turns and the second is refused.
create table owned_counts (
  owner_id text not null, kind text not null, n integer not null, primary key (owner_id, kind));
create function count_owned() returns trigger language plpgsql as $$
declare held integer;
begin
  if tg_op = 'INSERT' then
    insert into owned_counts values (new.owner_id, tg_argv[0], 1)
      on conflict (owner_id, kind) do update set n = owned_counts.n + 1
      returning n into held;
    if held > ${MAX_OWNED} then
      raise exception 'a user may hold at most % %', ${MAX_OWNED}, tg_argv[0]
        using errcode = 'check_violation', constraint = 'owned_cap';
    end if;
  else
    update owned_counts set n = n - 1 where owner_id = old.owner_id and kind = tg_argv[0];
  end if;
  return null;
end $$;
create trigger watchlists_owned after insert or delete on watchlists
  for each row execute function count_owned('watchlists');
create trigger portfolios_owned after insert or delete on user_portfolios
  for each row execute function count_owned('portfolios');
`,
  },
];

/** Applies the migrations `client`'s database lacks, under the advisory lock; returns those applied. */
export async function migrate(client: pg.PoolClient | pg.Client): Promise<number[]> {
  await client.query("select pg_advisory_lock($1)", [MIGRATION_LOCK]);
  try {
    await client.query(
      "create table if not exists schema_migrations (version integer primary key, name text not null, " +
        "applied_at timestamptz not null default now())",
    );
    const done = new Set(
      (await client.query<{ version: number }>("select version from schema_migrations")).rows.map((r) => r.version),
    );
    const applied: number[] = [];
    for (const m of MIGRATIONS.filter((m) => !done.has(m.version))) {
      await client.query("begin");
      try {
        await client.query(m.sql);
        await client.query("insert into schema_migrations (version, name) values ($1, $2)", [m.version, m.name]);
        await client.query("commit");
      } catch (e) {
        await client.query("rollback");
        throw e;
      }
      applied.push(m.version);
    }
    return applied;
  } finally {
    await client.query("select pg_advisory_unlock($1)", [MIGRATION_LOCK]);
  }
}
