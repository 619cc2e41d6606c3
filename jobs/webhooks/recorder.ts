// Attempt outcomes written to the webhook store in batches (one transaction per batch, at most
// every `everyMs`), so deliveries at hundreds a second do not open the store file for each one;
// and each webhook's signing details cached for ten seconds (a store read per attempt held a
// queue to about 30 deliveries a second), dropped at once when an outcome of this process may
// have disabled it; a change made elsewhere (a rotated secret) is seen within the ten seconds.
import type { AttemptOutcome, SigningWebhook, WebhookStore } from "../../pipeline/store/webhooks/types.ts";

export class OutcomeRecorder {
  private pending: AttemptOutcome[] = [];
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> = Promise.resolve();
  private cache = new Map<string, { at: number; hook: Promise<SigningWebhook | null> }>();

  constructor(
    private readonly store: Pick<WebhookStore, "recordAttempts" | "signing">,
    private readonly disableAfter: number,
    private readonly everyMs = 200,
    private readonly onError: (e: unknown) => void = () => undefined,
  ) {}

  record(o: AttemptOutcome): void {
    this.pending.push(o);
    if (o.state === "failed") this.cache.delete(o.webhookId);
    this.timer ??= setTimeout(() => void this.flush(), this.everyMs);
  }

  /** Writes what is pending (and waits for a write under way). */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.pending;
    this.pending = [];
    this.writing = this.writing.then(async () => {
      if (!batch.length) return;
      try {
        await this.store.recordAttempts(batch, this.disableAfter);
      } catch (e) {
        this.onError(e);
      }
      for (const o of batch) if (o.state === "failed") this.cache.delete(o.webhookId);
    });
    return this.writing;
  }

  signing(id: string, ttlMs = 10_000): Promise<SigningWebhook | null> {
    const hit = this.cache.get(id);
    if (hit && Date.now() - hit.at < ttlMs) return hit.hook;
    const hook = this.store.signing(id);
    this.cache.set(id, { at: Date.now(), hook });
    hook.catch(() => this.cache.delete(id));
    return hook;
  }
}
