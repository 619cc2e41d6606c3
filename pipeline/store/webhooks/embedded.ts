// The embedded WebhookStore: `webhooks.duckdb` beside the catalog (a file of its own, mode 0600),
// one short transaction per call (file-tx.ts), so the server, workers and CLIs share it.
import { Binds, type Conn, listValue, rows, scalar } from "../duck.ts";
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
    await this.tx(async (conn) => {
      for (const o of outcomes) await recordOne(conn, o, disableAfter);
    });
  }
}

/** One attempt: the delivery's row replaced, then the webhook's failure count and state. */
async function recordOne(conn: Conn, o: AttemptOutcome, disableAfter: number): Promise<void> {
  await conn.run(
    "insert or replace into webhook_deliveries " +
      "values ($1, $2, $3, $4, $5, $6, $7, $8::varchar::timestamptz, $9, now())",
    [
      o.webhookId,
      o.eventId,
      o.eventType,
      o.attempt,
      o.status,
      o.error?.slice(0, 500) ?? null,
      o.latencyMs,
      o.nextAttemptAt,
      o.state,
    ],
  );
  if (o.gone)
    await conn.run("update webhooks set enabled = false, disabled_reason = $1 where id = $2 and enabled", [
      "the receiver answered 410 Gone",
      o.webhookId,
    ]);
  else if (o.state === "delivered")
    await conn.run("update webhooks set consecutive_failures = 0 where id = $1", [o.webhookId]);
  else if (o.state === "failed")
    await conn.run(
      "update webhooks set consecutive_failures = consecutive_failures + 1, " +
        "enabled = enabled and consecutive_failures + 1 < $1, " +
        "disabled_reason = case when enabled and consecutive_failures + 1 >= $1 then $2 else disabled_reason end " +
        "where id = $3",
      [disableAfter, `${disableAfter} deliveries in a row failed for good`, o.webhookId],
    );
}
