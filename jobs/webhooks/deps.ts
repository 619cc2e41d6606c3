// What an attempt needs, put together once per process from the store and the settings.
import type { WebhookStore } from "../../pipeline/store/webhooks/types.ts";
import type { AttemptDeps } from "./attempt.ts";
import type { Resolver } from "./guard.ts";
import { postSigned } from "./http.ts";
import { OutcomeRecorder } from "./recorder.ts";
import type { DeliverySettings } from "./settings.ts";

export function deliveryDeps(
  store: Pick<WebhookStore, "recordAttempts" | "signing">,
  settings: DeliverySettings,
  opts: { resolver?: Resolver; onError?: (e: unknown) => void } = {},
): AttemptDeps & { recorder: OutcomeRecorder } {
  // outcomes written once a second: at five writes a second, two workers' writes to the one store
  // file held BullMQ delivery near half its rate (bench events)
  const recorder = new OutcomeRecorder(store, settings.disableAfter, 1000, opts.onError);
  return {
    settings,
    recorder,
    signing: (id) => recorder.signing(id),
    post: (url, headers, body) => postSigned(url, headers, body, settings, opts.resolver),
    record: (o) => recorder.record(o),
  };
}
