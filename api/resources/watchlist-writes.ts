// Watchlist writes: create, update, delete; add and remove stocks. Adding and removing are
// all-or-nothing: one unknown ticker or id (or neither list given) changes nothing.
import { z } from "zod";
import type { Watchlist } from "../../pipeline/store/catalog/types.ts";
import * as access from "./snapshot-access.ts";
import { descriptionText, nameText } from "./text-input.ts";
import { ownWatchlist } from "./watchlists.ts";
import {
  type FieldError,
  fail,
  fieldErrors,
  guarded,
  limited,
  MAX_OWNED,
  ok,
  type WriteContext,
  type WriteResult,
  writerOf,
} from "./write-results.ts";

export interface StockRefs {
  stockTickers?: readonly (string | null)[] | null;
  stockIds?: readonly (string | null)[] | null;
}
const listOf = (l: readonly (string | null)[] | null | undefined): string[] => (l ?? []).map((x) => x ?? "");

/** Tickers named by tickers and ids, each known to the served snapshot; unknown ones are errors. */
async function resolveStocks(ctx: WriteContext, refs: StockRefs): Promise<{ tickers: string[]; errors: FieldError[] }> {
  const tickers = listOf(refs.stockTickers);
  const ids = listOf(refs.stockIds);
  const errors: FieldError[] = [];
  const byTicker = await access.companiesByTicker(ctx.snapshot, tickers);
  const unknownT = tickers.filter((_, i) => !byTicker[i]);
  if (unknownT.length)
    errors.push({ field: "stockTickers", messages: unknownT.map((t) => `unknown ticker ${JSON.stringify(t)}`) });
  const byId = await access.companiesById(ctx.snapshot, ids);
  const unknownI = ids.filter((_, i) => !byId[i]);
  if (unknownI.length)
    errors.push({ field: "stockIds", messages: unknownI.map((id) => `unknown stock id ${JSON.stringify(id)}`) });
  const out = [...byTicker, ...byId].filter((c) => c !== undefined).map((c) => c.ticker.toUpperCase());
  return { tickers: [...new Set(out)], errors };
}

const noRefs = (refs: StockRefs) => !(refs.stockTickers?.length || refs.stockIds?.length);
const NEITHER = "give at least one of stockTickers and stockIds";

const fields = {
  name: nameText(200),
  description: descriptionText(),
  private: z.boolean(),
};
const createSchema = z.object({
  name: fields.name,
  description: fields.description.default(""),
  private: fields.private.default(true),
});
const updateSchema = z.object({
  name: fields.name.optional(),
  description: fields.description.optional(),
  private: fields.private.optional(),
});
const defined = <T extends object>(o: T) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v != null)) as Partial<T>;

export async function createWatchlist(
  ctx: WriteContext,
  input: { name?: string | null; description?: string | null; private?: boolean | null } & StockRefs,
): Promise<WriteResult<Watchlist>> {
  const parsed = createSchema.safeParse(
    defined({ name: input.name, description: input.description, private: input.private }),
  );
  if (!parsed.success) return { ok: false, errors: fieldErrors(parsed.error.issues) };
  if (ctx.catalog.watchlistsOf(ctx.caller.user.id).length >= MAX_OWNED)
    return fail("input", `a user may hold at most ${MAX_OWNED} watchlists`);
  const { tickers, errors } = await resolveStocks(ctx, input);
  if (errors.length) return { ok: false, errors };
  return limited("input", () => writerOf(ctx).createWatchlist(ctx.caller.user.id, { ...parsed.data, tickers }));
}

export function updateWatchlist(
  ctx: WriteContext,
  input: { watchlistId: string; name?: string | null; description?: string | null; private?: boolean | null },
): Promise<WriteResult<Watchlist>> {
  return guarded("watchlistId", async () => {
    const w = ownWatchlist(ctx, input.watchlistId);
    const parsed = updateSchema.safeParse(
      defined({ name: input.name, description: input.description, private: input.private }),
    );
    if (!parsed.success) return { ok: false, errors: fieldErrors(parsed.error.issues) };
    return ok(await writerOf(ctx).updateWatchlist(w.id, parsed.data));
  });
}

export function deleteWatchlist(ctx: WriteContext, input: { watchlistId: string }): Promise<WriteResult<string>> {
  return guarded("watchlistId", async () => {
    const w = ownWatchlist(ctx, input.watchlistId);
    await writerOf(ctx).deleteWatchlist(w.id);
    return ok(w.id);
  });
}

export function addToWatchlist(
  ctx: WriteContext,
  input: { watchlistId: string } & StockRefs,
): Promise<WriteResult<Watchlist>> {
  return guarded("watchlistId", async () => {
    const w = ownWatchlist(ctx, input.watchlistId);
    if (noRefs(input)) return fail("stockTickers", NEITHER);
    const { tickers, errors } = await resolveStocks(ctx, input);
    if (errors.length) return { ok: false, errors };
    return ok(await writerOf(ctx).addToWatchlist(w.id, tickers)); // the catalog skips tickers already present
  });
}

export function removeFromWatchlist(
  ctx: WriteContext,
  input: { watchlistId: string } & StockRefs,
): Promise<WriteResult<Watchlist>> {
  return guarded("watchlistId", async () => {
    const w = ownWatchlist(ctx, input.watchlistId);
    if (noRefs(input)) return fail("stockTickers", NEITHER);
    // a ticker the snapshot no longer knows can still be removed when it is in the watchlist
    const tickers = listOf(input.stockTickers).map((t) => t.toUpperCase());
    const errors: FieldError[] = [];
    const absent = tickers.filter((t) => !w.tickers.includes(t));
    if (absent.length)
      errors.push({ field: "stockTickers", messages: absent.map((t) => `${t} is not in watchlist ${w.id}`) });
    const ids = listOf(input.stockIds);
    const byId = await access.companiesById(ctx.snapshot, ids);
    const badIds = ids.filter((_, i) => !byId[i] || !w.tickers.includes(byId[i]!.ticker.toUpperCase()));
    if (badIds.length)
      errors.push({
        field: "stockIds",
        messages: badIds.map((id) => `stock id ${JSON.stringify(id)} is not in watchlist ${w.id}`),
      });
    if (errors.length) return { ok: false, errors };
    const all = [...new Set([...tickers, ...byId.map((c) => c!.ticker.toUpperCase())])];
    return ok(await writerOf(ctx).removeFromWatchlist(w.id, all));
  });
}
