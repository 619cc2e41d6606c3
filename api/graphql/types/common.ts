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

export const RATING_FIELD_NAMES = RATING_NAMES.map((n) => RATING_CAMEL[n]);

/** totalRating … macroRating: decimal strings with four places (contract §4). */
export function ratingFields(): GraphQLFieldConfigMap<Record<string, unknown>, unknown> {
  return Object.fromEntries(
    RATING_FIELD_NAMES.map((n) => [n, { type: GraphQLString, description: "0..10, four decimals" }]),
  );
}

export const DateArg = { type: GraphQLString, description: "YYYY-MM-DD" };

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
