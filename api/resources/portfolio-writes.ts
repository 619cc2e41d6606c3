// The caller's portfolios: create, update, delete. Rules are validated like portfolios.json;
// every change hands the portfolio's rebalance to the job runner (requestRebalance), and the
// portfolio reads PENDING until the snapshot serving its new rules is published.
import { z } from "zod";
import { portfolioRuleFields } from "../../pipeline/sources/portfolios-json.ts";
import type { UserPortfolio } from "../../pipeline/store/catalog/types.ts";
import { type PortfolioRules, RATING_CAMEL, RATING_NAMES } from "../../pipeline/types.ts";
import { NotFound } from "../errors.ts";
import { descriptionText, nameText } from "./text-input.ts";
import {
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

const rulesSchema = z.object({
  name: nameText(200),
  description: descriptionText().default(""),
  ...portfolioRuleFields,
});

/** Rule fields as a client sends them: camelCase ranges, any field may be absent or null. */
export interface PortfolioInput {
  name?: string | null;
  description?: string | null;
  rebalanceFrequency?: number | null;
  maxStocks?: number | null;
  maxStocksCriteria?: string | null;
  maxStocksCriteriaOrder?: string | null;
  maxSectorConcentration?: number | null;
  ranges?: Record<string, number[] | null> | null;
  costBps?: number | null;
}

const defined = (o: object) => Object.fromEntries(Object.entries(o).filter(([, v]) => v != null));
const camelRanges = (r: PortfolioRules["ranges"]) =>
  Object.fromEntries(RATING_NAMES.filter((n) => r[n]).map((n) => [RATING_CAMEL[n], r[n]]));

function validate(fields: Record<string, unknown>): WriteResult<Omit<PortfolioRules, "id">> {
  const parsed = rulesSchema.safeParse(fields);
  if (!parsed.success) return { ok: false, errors: fieldErrors(parsed.error.issues) };
  // no costBps key at all without costs: the stored rules stay what they were before costs existed
  const { costBps, ...rules } = parsed.data;
  return ok((costBps ? { ...rules, costBps } : rules) as Omit<PortfolioRules, "id">);
}

function ownPortfolio(ctx: WriteContext, id: string): UserPortfolio {
  const p = ctx.catalog.userPortfolio(id);
  if (!p || p.ownerId !== ctx.caller.user.id) throw new NotFound(`unknown portfolio ${id}`);
  return p;
}

export async function createPortfolio(ctx: WriteContext, input: PortfolioInput): Promise<WriteResult<UserPortfolio>> {
  const rules = validate(defined({ ...input, ranges: input.ranges ? defined(input.ranges) : undefined }));
  if (!rules.ok) return rules;
  if (ctx.catalog.userPortfoliosOf(ctx.caller.user.id).length >= MAX_OWNED)
    return fail("input", `a user may hold at most ${MAX_OWNED} portfolios`);
  const created = await limited("input", () => writerOf(ctx).createUserPortfolio(ctx.caller.user.id, rules.value));
  if (created.ok) ctx.requestRebalance?.(created.value.id);
  return created;
}

/** Fields given replace the current ones (ranges as a whole); absent or null fields are kept. */
export function updatePortfolio(
  ctx: WriteContext,
  input: PortfolioInput & { portfolioId: string },
): Promise<WriteResult<UserPortfolio>> {
  return guarded("portfolioId", async () => {
    const cur = ownPortfolio(ctx, input.portfolioId);
    const { portfolioId: _id, ...patch } = input;
    const merged = {
      ...defined({ ...cur, ranges: camelRanges(cur.ranges) }),
      ...defined({ ...patch, ranges: patch.ranges ? defined(patch.ranges) : undefined }),
    };
    if (input.maxSectorConcentration === null) delete merged.maxSectorConcentration; // explicit null clears the cap
    const { id: _i, ownerId: _o, createdAt: _c, ...fields } = merged;
    const rules = validate(fields);
    if (!rules.ok) return rules;
    const p = await writerOf(ctx).updateUserPortfolio(cur.id, { ...rules.value, id: cur.id });
    ctx.requestRebalance?.(p.id);
    return ok(p);
  });
}

export function deletePortfolio(ctx: WriteContext, input: { portfolioId: string }): Promise<WriteResult<string>> {
  return guarded("portfolioId", async () => {
    const cur = ownPortfolio(ctx, input.portfolioId);
    await writerOf(ctx).deleteUserPortfolio(cur.id);
    ctx.requestRebalance?.(cur.id); // drops its rows from the next snapshot
    return ok(cur.id);
  });
}
