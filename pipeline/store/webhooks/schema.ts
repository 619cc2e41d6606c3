// Tables of the embedded webhook store (webhooks.duckdb beside the catalog, a file of its own).
export const WEBHOOK_SCHEMA = `
create sequence if not exists seq_webhook start 1;
create table if not exists webhooks (
  id varchar primary key, owner_id varchar not null, url varchar not null, description varchar not null,
  event_types varchar[] not null, filters varchar not null, secret varchar not null, enabled boolean not null,
  disabled_reason varchar, consecutive_failures integer not null,
  created_at timestamptz not null, updated_at timestamptz not null);
create table if not exists webhook_deliveries (
  webhook_id varchar not null, event_id varchar not null, event_type varchar not null, attempts integer not null,
  last_status integer, last_error varchar, latency_ms double, next_attempt_at timestamptz, state varchar not null,
  updated_at timestamptz not null, primary key (webhook_id, event_id));
`;
