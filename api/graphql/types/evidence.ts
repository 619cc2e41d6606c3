// The rating evidence (REST /data/v1/rating_evidence): one node per rating at one horizon.
import { GraphQLFloat, GraphQLInt, GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLString } from "graphql";

const list = <T extends GraphQLObjectType | typeof GraphQLFloat>(t: T) =>
  new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(t)));

export const RatingIcNode = new GraphQLObjectType({
  name: "RatingIcNode",
  description: "One evaluated rating date: the Spearman IC of the rating with the forward return, over `stocks`",
  fields: {
    date: { type: new GraphQLNonNull(GraphQLString) },
    ic: { type: new GraphQLNonNull(GraphQLFloat) },
    stocks: { type: new GraphQLNonNull(GraphQLInt) },
  },
});

export const RatingEvidenceNode = new GraphQLObjectType({
  name: "RatingEvidenceNode",
  description:
    "What a rating predicted at a horizon (docs/ratings.md, The evidence); null figures are undefined " +
    "(no evaluated date, or one for a standard deviation)",
  fields: {
    rating: { type: new GraphQLNonNull(GraphQLString), description: "snake_case, or momentum_12_1_baseline" },
    horizon: { type: new GraphQLNonNull(GraphQLInt), description: "Calendar months" },
    dates: { type: new GraphQLNonNull(GraphQLInt), description: "Evaluated rating dates" },
    meanIc: { type: GraphQLFloat },
    icStd: { type: GraphQLFloat, description: "Sample standard deviation (n − 1)" },
    icir: { type: GraphQLFloat, description: "meanIc / icStd" },
    tStat: { type: GraphQLFloat, description: "meanIc / (icStd / √dates)" },
    hitRate: { type: GraphQLFloat, description: "Share of dates with ic > 0" },
    quintileReturns: { type: list(GraphQLFloat), description: "Mean forward return per quintile, lowest first" },
    spread: { type: GraphQLFloat, description: "Fifth quintile minus first" },
    topTurnover: { type: GraphQLFloat, description: "Mean share of the top quintile new since the date before" },
    ic: { type: list(RatingIcNode) },
  },
});
