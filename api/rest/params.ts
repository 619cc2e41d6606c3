// Query parameter schemas shared by the routers. Each carries its own 400 message, and the
// OpenAPI document is generated from these same schemas (z.toJSONSchema, input side).
import { z } from "zod";
import { type ErrorDetail, InvalidParameter } from "../errors.ts";
import { ORDER_KEYS, ORDER_VALUES, type OrderBy, parseRanges } from "../resources/ordering.ts";

const msg = (m: string) => ({ error: m });

export const formatParam = z
  .enum(["json", "csv", "arrow"], msg('must be "json", "csv" or "arrow"'))
  .default("json")
  .meta({
    description:
      "Response format: json, csv (the rows flattened, dotted columns), or arrow (the CSV's rows as an Arrow IPC " +
      "stream, application/vnd.apache.arrow.stream, with typed columns: dates as Arrow dates, numbers float64 or " +
      "int32; see docs/api/bulk.md)",
  });

// Numbers in a query are decimal: z.coerce.number would take Number()'s forms too (0x10, 0b1,
// 0o7, " 5", "" as 0, Infinity). Anything else stays a string, and the number schema refuses it
// with the parameter's own message. The JSON Schema (OpenAPI) is the inner number schema's.
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
export const decimal = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (typeof v === "string" && DECIMAL.test(v) ? Number(v) : v), schema);

const LIMIT = "must be an integer from 1 to 200";
export const limitParam = decimal(
  z.number(msg(LIMIT)).int(msg(LIMIT)).min(1, msg(LIMIT)).max(200, msg(LIMIT)).default(50),
).meta({
  description: "Number of objects to return (1 to 200)",
});

const OFFSET = "must be an integer >= 0";
export const offsetParam = decimal(
  z.number(msg(OFFSET)).int(msg(OFFSET)).min(0, msg(OFFSET)).max(Number.MAX_SAFE_INTEGER, msg(OFFSET)).default(0),
).meta({
  description: "Number of objects to skip",
});

export const searchParam = z
  .string(msg("must be a string"))
  .max(200, msg("must be at most 200 characters"))
  .optional()
  .meta({ description: "Keeps stocks whose ticker or name contains the string (case-insensitive)" });

export const orderByParam = (def: OrderBy) =>
  z
    .enum(ORDER_VALUES, msg(`must be one of ${ORDER_KEYS.join(", ")}, optionally prefixed with -`))
    .default(def)
    .meta({
      description: `Sort key; a leading - means descending. Ties are broken by ticker, then id. Default ${def}`,
    });

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
export function isValidDate(s: string): boolean {
  const m = DATE_RE.exec(s);
  if (!m) return false;
  const d = new Date(Date.UTC(+m[1], +m[2] - 1, +m[3]));
  return d.getUTCFullYear() === +m[1] && d.getUTCMonth() === +m[2] - 1 && d.getUTCDate() === +m[3];
}
export const dateParam = z
  .string(msg("must be a date YYYY-MM-DD"))
  .regex(DATE_RE, msg("must be a date YYYY-MM-DD"))
  .refine(isValidDate, msg("must be a valid calendar date YYYY-MM-DD"))
  .optional()
  .meta({
    description: "Ratings as of the latest rating date on or before this date (YYYY-MM-DD); default the most recent",
  });

export const rangesParam = z
  .string(msg("must be a string"))
  .transform((s, ctx) => {
    const r = parseRanges(s);
    if (typeof r === "string") {
      ctx.addIssue({ code: "custom", message: r });
      return z.NEVER;
    }
    return r;
  })
  .optional()
  .meta({
    description:
      "Rating bounds, strict JSON or unquoted keys: {return_rating:[8,10],growth_rating:[7,10]}. Both bounds " +
      "inclusive, 0 <= min <= max <= 10.",
    examples: ['{"return_rating":[8,10]}', "{return_rating:[8,10],growth_rating:[7,10]}"],
  });

export const booleanParam = (def: boolean, description: string) =>
  z
    .string(msg("must be true or false"))
    .regex(/^(true|false|1|0)$/i, msg("must be true or false"))
    .transform((v) => /^(true|1)$/i.test(v))
    .default(def)
    .meta({ description });

export const benchmarkParam = z
  .string(msg("must be a benchmark id"))
  .regex(/^[A-Za-z0-9_.-]{1,64}$/, msg("must be a benchmark id (see /data/v1/benchmarks)"))
  .optional()
  .meta({ description: "Benchmark id (integer-valued string, see /data/v1/benchmarks)" });

const PERIOD = "must be a number of years greater than 0";
export const periodParam = decimal(z.number(msg(PERIOD)).positive(msg(PERIOD)).max(1000, msg(PERIOD)).optional()).meta({
  description: "Years of returns back from the latest date (float > 0); default the whole history",
});

/** zod issues → InvalidParameter details (one per parameter, first message). */
export function invalidFromZod(issues: readonly z.core.$ZodIssue[]): InvalidParameter {
  const details: ErrorDetail[] = [];
  const seen = new Set<string>();
  for (const i of issues) {
    const param = String(i.path[0] ?? "query");
    if (seen.has(param)) continue;
    seen.add(param);
    details.push({ param, message: i.message });
  }
  return new InvalidParameter(details);
}
