// Benchmarks and the caller's profile.
import { GraphQLID, GraphQLInt, GraphQLNonNull, GraphQLObjectType, GraphQLString } from "graphql";

export const BenchmarkNode = new GraphQLObjectType({
  name: "BenchmarkNode",
  description: "The id is the value of `benchmark` in metrics and performance.",
  fields: {
    id: { type: new GraphQLNonNull(GraphQLID) },
    name: { type: new GraphQLNonNull(GraphQLString) },
    description: { type: new GraphQLNonNull(GraphQLString) },
    rebalanceFrequency: { type: new GraphQLNonNull(GraphQLInt) },
  },
});

export const ProfileNode = new GraphQLObjectType({
  name: "ProfileNode",
  fields: {
    id: { type: new GraphQLNonNull(GraphQLID) },
    email: { type: new GraphQLNonNull(GraphQLString) },
    firstName: { type: new GraphQLNonNull(GraphQLString) },
    lastName: { type: new GraphQLNonNull(GraphQLString) },
    phoneNumber: { type: new GraphQLNonNull(GraphQLString) },
  },
});
