// The outcome of a write: success with its object, or field errors and nothing changed.
import type { CatalogWriter } from "../../pipeline/store/catalog/types.ts";
import { ApiError, NotFound } from "../errors.ts";
import type { ReadContext } from "./context.ts";

export interface FieldError {
  field: string;
  messages: string[];
}
export type WriteResult<T> = { ok: true; value: T } | { ok: false; errors: FieldError[] };

export const ok = <T>(value: T): WriteResult<T> => ({ ok: true, value });
export const fail = (field: string, ...messages: string[]): WriteResult<never> => ({
  ok: false,
  errors: [{ field, messages }],
});

/** Runs a write; "not found" (another user's object, or none) becomes a field error. */
export async function guarded<T>(field: string, run: () => Promise<WriteResult<T>>): Promise<WriteResult<T>> {
  try {
    return await run();
  } catch (e) {
    if (e instanceof NotFound) return fail(field, e.message);
    throw e;
  }
}

/** Writes need a catalog writer; a read-only deployment says so. */
export interface WriteContext extends ReadContext {
  writer: CatalogWriter | null;
  requestRebalance: ((portfolioId: string) => void) | null;
}
export function writerOf(ctx: WriteContext): CatalogWriter {
  if (!ctx.writer) throw new ApiError(503, "unavailable", "this server accepts no writes");
  return ctx.writer;
}

/** zod-style issues → field errors, one entry per field. */
export function fieldErrors(issues: readonly { path: readonly PropertyKey[]; message: string }[]): FieldError[] {
  const by = new Map<string, string[]>();
  for (const i of issues) {
    const f = i.path.map(String).join(".") || "input";
    by.set(f, [...(by.get(f) ?? []), i.message]);
  }
  return [...by].map(([field, messages]) => ({ field, messages }));
}

/** A user may hold at most this many watchlists and portfolios (the catalog enforces it when it writes). */
export { MAX_OWNED } from "../../pipeline/store/catalog/types.ts";

/** A write the catalog refused for a per-user limit (CatalogError "limit") as a field error. */
export async function limited<T>(field: string, write: () => Promise<T>): Promise<WriteResult<T>> {
  try {
    return ok(await write());
  } catch (e) {
    if ((e as { code?: unknown }).code === "limit") return fail(field, (e as Error).message);
    throw e;
  }
}
