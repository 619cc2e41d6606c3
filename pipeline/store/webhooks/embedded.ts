// The embedded WebhookStore: `webhooks.duckdb` beside the catalog (a file of its own, mode 0600),
// one short transaction per call (file-tx.ts), so the server, workers and CLIs share it.
import { Binds, type Conn, listValue, rows, scalar } from "../duck/duck.ts";
import { appendTable } from "../duck/write.ts";
import { fileTx } from "./file-tx.ts";
import { WEBHOOK_SCHEMA } from "./schema.ts";
import { newSigningSecret } from "./secret.ts";
import {
  type AttemptOutcome,
  type DeliveryRecord,
  MAX_WEBHOOKS_PER_USER,
  type SigningWebhook,
  type Webhook,
  WebhookError,
  type WebhookEventType,
  type WebhookFields,
  type WebhookPatch,
  type WebhookStore,
} from "./types.ts";
import { checkFields, checkFilters, checkTypes, checkUrl } from "./validate.ts";

const iso = (v: unknown) => (v == null ? null : new Date(v instanceof Date ? v : String(v)).toISOString());
const COLUMNS =
  "id, owner_id, url, description, event_types, filters, enabled, disabled_reason, consecutive_failures, " +
  "created_at, updated_at";

function webhookOf(r: Record<string, unknown>): Webhook {
  return {
    id: String(r.id),
    ownerId: String(r.owner_id),
    url: String(r.url),
    description: String(r.description),
    eventTypes: r.event_types as string[] as WebhookEventType[],
    filters: JSON.parse(String(r.filters)),
    enabled: Boolean(r.enabled),
    disabledReason: r.disabled_reason == null ? null : String(r.disabled_reason),
    consecutiveFailures: Number(r.consecutive_failures),
    createdAt: iso(r.created_at)!,
    updatedAt: iso(r.updated_at)!,
  };
}

export class EmbeddedWebhookStore implements WebhookStore {
  private constructor(readonly path: string) {}

  static async open(path: string): Promise<EmbeddedWebhookStore> {
    const s = new EmbeddedWebhookStore(path);
    await fileTx(path, (conn) => conn.run(WEBHOOK_SCHEMA));
    return s;
  }

  private tx<T>(fn: (conn: Conn) => Promise<T>): Promise<T> {
    return fileTx(this.path, fn);
  }

  private async one(conn: Conn, id: string): Promise<Webhook | null> {
    const [r] = await rows(conn, `select ${COLUMNS} from webhooks where id = $1`, [id]);
    return r ? webhookOf(r) : null;
  }

  private async must(conn: Conn, id: string): Promise<Webhook> {
    const w = await this.one(conn, id);
    if (!w) throw new WebhookError("not_found", `no webhook ${id}`);
    return w;
  }

  async create(ownerId: string, fields: WebhookFields): Promise<{ webhook: Webhook; secret: string }> {
    const f = checkFields(fields);
    const secret = newSigningSecret();
    const webhook = await this.tx(async (conn) => {
      const n = Number(await scalar(conn, "select count(*) from webhooks where owner_id = $1", [ownerId]));
      if (n >= MAX_WEBHOOKS_PER_USER)
        throw new WebhookError("limit", `a user may hold at most ${MAX_WEBHOOKS_PER_USER} webhooks`);
      const id = `wh_${await scalar<bigint>(conn, "select nextval('seq_webhook')")}`;
      await conn.run(
        "insert into webhooks values ($1, $2, $3, $4, $5::varchar[], $6, $7, true, null, 0, now(), now())",
        [id, ownerId, f.url, f.description, listValue(f.eventTypes), JSON.stringify(f.filters), secret],
      );
      return this.must(conn, id);
    });
    return { webhook, secret };
  }

  async update(id: string, patch: WebhookPatch): Promise<Webhook> {
    const b = new Binds();
    const sets = [
      patch.url !== undefined && `url = ${b.v(checkUrl(patch.url))}`,
      patch.description !== undefined && `description = ${b.v(patch.description.slice(0, 500))}`,
      patch.eventTypes !== undefined && `event_types = ${b.v(listValue(checkTypes(patch.eventTypes)))}::varchar[]`,
      patch.filters !== undefined && `filters = ${b.v(JSON.stringify(checkFilters(patch.filters)))}`,
      patch.enabled === true && "enabled = true, disabled_reason = null, consecutive_failures = 0",
      patch.enabled === false && "enabled = false, disabled_reason = null",
      "updated_at = now()",
    ].filter(Boolean);
    return this.tx(async (conn) => {
      await this.must(conn, id);
      await conn.run(`update webhooks set ${sets.join(", ")} where id = ${b.v(id)}`, b.params);
      return this.must(conn, id);
    });
  }

  async delete(id: string): Promise<void> {
    await this.tx(async (conn) => {
      await this.must(conn, id);
      await conn.run("delete from webhook_deliveries where webhook_id = $1", [id]);
      await conn.run("delete from webhooks where id = $1", [id]);
    });
  }

  async rotateSecret(id: string): Promise<{ webhook: Webhook; secret: string }> {
    const secret = newSigningSecret();
    const webhook = await this.tx(async (conn) => {
      await this.must(conn, id);
      await conn.run("update webhooks set secret = $1, updated_at = now() where id = $2", [secret, id]);
      return this.must(conn, id);
    });
    return { webhook, secret };
  }

  get(id: string): Promise<Webhook | null> {
    return this.tx((conn) => this.one(conn, id));
  }

  async list(ownerId?: string): Promise<Webhook[]> {
    const sql = `select ${COLUMNS} from webhooks ${ownerId === undefined ? "" : "where owner_id = $1"} order by id`;
    return (await this.tx((conn) => rows(conn, sql, ownerId === undefined ? [] : [ownerId]))).map(webhookOf);
  }

  async subscribers(types: readonly WebhookEventType[]): Promise<Webhook[]> {
    const sql =
      `select ${COLUMNS} from webhooks where enabled and ` +
      "len(list_intersect(event_types, $1::varchar[])) > 0 order by id";
    return (await this.tx((conn) => rows(conn, sql, [listValue([...types])]))).map(webhookOf);
  }

  async signing(id: string): Promise<SigningWebhook | null> {
    const [r] = await this.tx((conn) =>
      rows(conn, "select id, url, enabled, secret from webhooks where id = $1", [id]),
    );
    return r ? { id: String(r.id), url: String(r.url), enabled: Boolean(r.enabled), secret: String(r.secret) } : null;
  }

  async deliveries(webhookId: string, limit = 100): Promise<DeliveryRecord[]> {
    const rs = await this.tx((conn) =>
      rows(conn, "select * from webhook_deliveries where webhook_id = $1 order by updated_at desc, event_id limit $2", [
        webhookId,
        limit,
      ]),
    );
    return rs.map((r) => ({
      webhookId: String(r.webhook_id),
      eventId: String(r.event_id),
      eventType: String(r.event_type),
      attempts: Number(r.attempts),
      lastStatus: r.last_status == null ? null : Number(r.last_status),
      lastError: r.last_error == null ? null : String(r.last_error),
      latencyMs: r.latency_ms == null ? null : Number(r.latency_ms),
      nextAttemptAt: iso(r.next_attempt_at),
      state: String(r.state) as DeliveryRecord["state"],
      updatedAt: iso(r.updated_at)!,
    }));
  }

  async recordAttempts(outcomes: AttemptOutcome[], disableAfter: number): Promise<void> {
    if (!outcomes.length) return;
    await this.tx((conn) => recordBatch(conn, outcomes, disableAfter));
  }
}

/**
 * A batch of attempts in set operations (a delivering process writes hundreds a second): each
 * delivery's row replaced by its latest attempt, then each webhook's failure count and state
 * from its attempts in order (a delivered one resets the count, each failed-for-good one adds one,
 * a 410 disables at once).
 */
async function recordBatch(conn: Conn, outcomes: AttemptOutcome[], disableAfter: number): Promise<void> {
  await appendTable(
    conn,
    "attempt_batch",
    [
      ["seq", "integer"],
      ["webhook_id", "varchar"],
      ["event_id", "varchar"],
      ["event_type", "varchar"],
      ["attempts", "integer"],
      ["last_status", "integer"],
      ["last_error", "varchar"],
      ["latency_ms", "double"],
      ["next_attempt_at", "varchar"],
      ["state", "varchar"],
    ],
    outcomes.map((o, i) => [
      i,
      o.webhookId,
      o.eventId,
      o.eventType,
      o.attempt,
      o.status,
      o.error?.slice(0, 500) ?? null,
      o.latencyMs,
      o.nextAttemptAt,
      o.state,
    ]),
  );
  await conn.run(
    "insert or replace into webhook_deliveries select webhook_id, event_id, event_type, attempts, last_status, " +
      "last_error, latency_ms, next_attempt_at::timestamptz, state, now() from attempt_batch " +
      "qualify row_number() over (partition by webhook_id, event_id order by seq desc) = 1",
  );
  await updateFailureCounts(conn, outcomes, disableAfter);
  await conn.run("drop table attempt_batch");
  await conn.run("drop table attempt_counts");
}

/** Each webhook's consecutive failures and state after the batch's attempts, in one update. */
async function updateFailureCounts(conn: Conn, outcomes: AttemptOutcome[], disableAfter: number): Promise<void> {
  const counts = new Map<string, { reset: boolean; add: number; gone: boolean }>();
  for (const o of outcomes) {
    const c = counts.get(o.webhookId) ?? { reset: false, add: 0, gone: false };
    if (o.gone) c.gone = true;
    else if (o.state === "delivered") Object.assign(c, { reset: true, add: 0 });
    else if (o.state === "failed") c.add++;
    counts.set(o.webhookId, c);
  }
  await appendTable(
    conn,
    "attempt_counts",
    [
      ["webhook_id", "varchar"],
      ["was_reset", "boolean"],
      ["failed_n", "integer"],
      ["gone", "boolean"],
    ],
    [...counts].map(([id, c]) => [id, c.reset, c.add, c.gone]),
  );
  const next = "(case when t.was_reset then 0 else w.consecutive_failures end + t.failed_n)";
  await conn.run(
    `update webhooks w set consecutive_failures = ${next}, ` +
      `enabled = w.enabled and not t.gone and ${next} < $1, ` +
      `disabled_reason = case when w.enabled and t.gone then $2 when w.enabled and ${next} >= $1 then $3 ` +
      "else w.disabled_reason end from attempt_counts t where w.id = t.webhook_id",
    [disableAfter, "the receiver answered 410 Gone", `${disableAfter} deliveries in a row failed for good`],
  );
}
