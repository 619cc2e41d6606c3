// Catalog tables. Ids are strings; sequences give readable integer-valued ids.
export const CATALOG_SCHEMA = `
create sequence if not exists seq_user start 1;
create sequence if not exists seq_watchlist start 1;
create sequence if not exists seq_portfolio start 5001;
create table if not exists users (
  id varchar primary key, email varchar unique not null, first_name varchar not null,
  last_name varchar not null, phone varchar not null, created_at timestamptz not null);
create table if not exists api_keys (
  id varchar primary key, user_id varchar not null, key_hash varchar unique not null, hint varchar not null,
  scopes varchar not null, created_at timestamptz not null, revoked_at timestamptz);
create table if not exists watchlists (
  id varchar primary key, owner_id varchar not null, name varchar not null, description varchar not null,
  private boolean not null, created_at timestamptz not null);
create table if not exists watchlist_items (
  watchlist_id varchar not null, ticker varchar not null, position integer not null, added_at timestamptz not null,
  primary key (watchlist_id, ticker));
create table if not exists user_portfolios (
  id varchar primary key, owner_id varchar not null, created_at timestamptz not null, updated_at timestamptz not null,
  rules varchar not null);
create table if not exists rebalance_failures (
  portfolio_id varchar primary key, requested_at timestamptz, failed_at timestamptz not null, reason varchar not null);
create table if not exists id_map (
  kind varchar not null, name varchar not null, id integer not null, primary key (kind, name));
`;
