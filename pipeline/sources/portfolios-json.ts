// portfolios.json: predefined portfolios and benchmarks (contract §2), validated with zod.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { type BenchmarkDef, type PortfolioRules, RATING_CAMEL, RATING_NAMES, type RatingName } from "../types.ts";
import type { RejectedRow } from "./report.ts";

const CAMEL_TO_SNAKE = Object.fromEntries(RATING_NAMES.map((n) => [RATING_CAMEL[n], n])) as Record<string, RatingName>;
const criteria = z.enum([...RATING_NAMES, "market_cap"]);
const range = z
  .tuple([z.number().min(0).max(10), z.number().min(0).max(10)])
  .refine(([a, b]) => a <= b, "min must not exceed max");
// Range keys are camelCase as in the Portfolio resource; snake_case is accepted too.
const ranges = z
  .record(z.string(), range)
  .default({})
  .superRefine((r, ctx) => {
    for (const k of Object.keys(r))
      if (!CAMEL_TO_SNAKE[k] && !RATING_NAMES.includes(k as RatingName))
        ctx.addIssue({ code: "custom", message: `unknown rating '${k}'` });
  })
  .transform(
    (r) =>
      Object.fromEntries(Object.entries(r).map(([k, v]) => [CAMEL_TO_SNAKE[k] ?? k, v])) as PortfolioRules["ranges"],
  );
const idString = z.union([
  z.string().regex(/^\d+$/, "must be an integer-valued string"),
  z.number().int().nonnegative().transform(String),
]);
const fraction = z
  .union([z.string(), z.number()])
  .transform(Number)
  .refine((x) => x > 0 && x <= 1, "must be a fraction in (0, 1]")
  .nullish()
  .transform((x) => x ?? null);
/** The rule fields of a portfolio, as portfolios.json validates them (GraphQL mutations reuse them). */
export const portfolioRuleFields = {
  rebalanceFrequency: z.number().int().positive(),
  maxStocks: z.number().int().positive(),
  maxStocksCriteria: criteria.default("total_rating"),
  maxStocksCriteriaOrder: z.enum(["descending", "ascending"]).default("descending"),
  maxSectorConcentration: fraction,
  ranges,
  // Basis points of the traded value paid at each rebalance; 0 is stored as absent, so a portfolio
  // without costs keeps the very rules text (and every published byte) it had before costs existed.
  costBps: z
    .number()
    .min(0)
    .max(500)
    .nullish()
    .transform((x) => (x ? x : undefined)),
};
const portfolio = z.object({
  id: idString,
  name: z.string().min(1),
  description: z.string().default(""),
  ...portfolioRuleFields,
});
const benchmark = z
  .object({
    id: idString,
    name: z.string().min(1),
    description: z.string().default(""),
    rebalanceFrequency: z.number().int().nonnegative().default(0),
    series: z.string().optional(),
    maxStocks: z.number().int().positive().optional(),
    maxStocksCriteria: criteria.default("total_rating"),
    maxStocksCriteriaOrder: z.enum(["descending", "ascending"]).default("descending"),
    maxSectorConcentration: fraction,
    ranges,
  })
  .refine(
    (b) => b.series !== undefined || (b.maxStocks !== undefined && b.rebalanceFrequency > 0),
    "needs either `series` or portfolio rules (maxStocks, rebalanceFrequency)",
  );
const file = z.object({ portfolios: z.array(portfolio).default([]), benchmarks: z.array(benchmark).default([]) });

export interface PortfolioSource {
  portfolios: PortfolioRules[];
  benchmarks: BenchmarkDef[];
}

export function readPortfoliosJson(dir: string): { value: PortfolioSource; rejects: RejectedRow[]; given: boolean } {
  const path = join(dir, "portfolios.json");
  const empty = { portfolios: [], benchmarks: [] };
  if (!existsSync(path)) return { value: empty, rejects: [], given: false };
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    return {
      value: empty,
      rejects: [{ file: "portfolios.json", row: 0, column: "", reason: `not valid JSON: ${(e as Error).message}` }],
      given: true,
    };
  }
  const parsed = file.safeParse(json);
  if (!parsed.success) {
    const rejects = parsed.error.issues.map((i) => ({
      file: "portfolios.json",
      // Row = 1-based position in its array; column = the field path inside it.
      row: typeof i.path[1] === "number" ? i.path[1] + 1 : 0,
      column: i.path.join("."),
      reason: i.message,
    }));
    return { value: empty, rejects, given: true };
  }
  const rejects: RejectedRow[] = [];
  const ids = new Set<string>();
  const all = [
    ...parsed.data.portfolios.map((p) => ["portfolios", p.id] as const),
    ...parsed.data.benchmarks.map((b) => ["benchmarks", b.id] as const),
  ];
  all.forEach(([kind, id], i) => {
    if (ids.has(`${kind}:${id}`))
      rejects.push({ file: "portfolios.json", row: i + 1, column: `${kind}.id`, reason: `duplicate id ${id}` });
    ids.add(`${kind}:${id}`);
  });
  const benchmarks: BenchmarkDef[] = parsed.data.benchmarks.map((b) => ({
    id: b.id,
    name: b.name,
    description: b.description,
    rebalanceFrequency: b.rebalanceFrequency,
    ...(b.series !== undefined
      ? { series: b.series }
      : {
          rules: {
            rebalanceFrequency: b.rebalanceFrequency,
            maxStocks: b.maxStocks!,
            maxStocksCriteria: b.maxStocksCriteria,
            maxStocksCriteriaOrder: b.maxStocksCriteriaOrder,
            maxSectorConcentration: b.maxSectorConcentration,
            ranges: b.ranges,
          },
        }),
  }));
  // no costBps key without costs: the rules text stays what it was before costs existed
  const portfolios = parsed.data.portfolios.map(({ costBps, ...p }) => (costBps ? { ...p, costBps } : p));
  return { value: { portfolios, benchmarks }, rejects, given: true };
}
