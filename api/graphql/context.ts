// What every resolver receives: the resource readers' context (snapshot read once per request,
// catalog, caller), per-request batch readers, and the write ports for mutations.
import type { CatalogWriter } from "../../pipeline/store/catalog/types.ts";
import { type BatchReaders, createBatchReaders } from "../resources/batch.ts";
import type { ReadContext } from "../resources/context.ts";
import type { Deadline } from "./field-turns.ts";
import type { WebhookPort } from "./mutations/webhook-port.ts";

/** Hands a portfolio's rebalance to the job runner (jobs/ implements it; api/ only asks). */
export type RequestRebalance = (portfolioId: string) => void;

export interface GqlContext extends ReadContext {
  batch: BatchReaders;
  writer: CatalogWriter | null;
  requestRebalance: RequestRebalance | null;
  /** When the request's time is up (costly fields still waiting then are refused: field-turns.ts). */
  deadline?: Deadline;
  /** Webhook subscriptions and their test POST; absent: the webhook fields answer an error. */
  webhooks?: WebhookPort | null;
}

export function createContext(
  read: ReadContext,
  writer: CatalogWriter | null,
  requestRebalance: RequestRebalance | null,
  deadline?: Deadline,
): GqlContext {
  return { ...read, batch: createBatchReaders(read.snapshot), writer, requestRebalance, deadline };
}
