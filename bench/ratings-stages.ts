// The compiled ratings stages, as a run executes them (`npm run build` output; RATINGS_FROM_SOURCES=1:
// the sources, through tsx, whose helpers slow closures down).
const src = process.env.RATINGS_FROM_SOURCES;
export const { modelRatingsStage } = (await import(
  src ? "../pipeline/stages/model-ratings.ts" : "../dist/pipeline/stages/model-ratings.js"
)) as typeof import("../pipeline/stages/model-ratings.ts");
export const { computeRatings } = (await import(
  src ? "../pipeline/ratings/computed.ts" : "../dist/pipeline/ratings/computed.js"
)) as typeof import("../pipeline/ratings/computed.ts");
