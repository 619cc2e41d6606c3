// Small shared pieces of the schema: the rating fields (strings with four decimals), the date
// argument, and the rating ranges input.
import {
  type GraphQLFieldConfigMap,
  GraphQLFloat,
  GraphQLInputObjectType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLString,
} from "graphql";
import { RATING_CAMEL, RATING_NAMES } from "../../../pipeline/types.ts";
import { InvalidParameter } from "../../errors.ts";

export const RATING_FIELD_NAMES = RATING_NAMES.map((n) => RATING_CAMEL[n]);

/** totalRating … macroRating: decimal strings with four places (contract §4). */
export function ratingFields(): GraphQLFieldConfigMap<Record<string, unknown>, unknown> {
  return Object.fromEntries(
    RATING_FIELD_NAMES.map((n) => [n, { type: GraphQLString, description: "0..10, four decimals" }]),
  );
}

export const DateArg = { type: GraphQLString, description: "YYYY-MM-DD" };

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
/** A `date` argument checked as a calendar date (BAD_USER_INPUT naming `date`); undefined when absent. */
export function dateArg(v: string | null | undefined): string | undefined {
  if (v == null) return undefined;
  const m = DATE_RE.exec(v);
  const d = m && new Date(Date.UTC(+m[1], +m[2] - 1, +m[3]));
  if (!m || !d || d.getUTCDate() !== +m[3] || d.getUTCMonth() !== +m[2] - 1)
    throw InvalidParameter.one("date", "must be a valid calendar date YYYY-MM-DD");
  return v;
}

const bounds = () => new GraphQLList(new GraphQLNonNull(GraphQLFloat));
/** camelCase rating name → [min, max], both inclusive, 0 <= min <= max <= 10. */
export const RatingRangesInput = new GraphQLInputObjectType({
  name: "RatingRangesInput",
  fields: Object.fromEntries(RATING_FIELD_NAMES.map((n) => [n, { type: bounds() }])),
});
export const RatingRanges = new GraphQLObjectType<Record<string, [number, number]>>({
  name: "RatingRanges",
  fields: Object.fromEntries(RATING_FIELD_NAMES.map((n) => [n, { type: bounds() }])),
});
