// Seed, size and bounds of a fuzz run. `npm test` runs a fixed seed and few cases; `npm run fuzz`
// (FUZZ_LONG=1) a random seed and many more. FUZZ_SEED and FUZZ_RUNS replay or resize either.
const long = process.env.FUZZ_LONG === "1";
const seedEnv = process.env.FUZZ_SEED;

export const FUZZ = {
  long,
  seed: seedEnv !== undefined && seedEnv !== "" ? Number(seedEnv) : long ? (Math.random() * 2 ** 31) | 0 : 27,
  /** Cases per property (the REST, path and GraphQL properties each run this many). */
  runs: Number(process.env.FUZZ_RUNS || (long ? 2000 : 150)),
  /**
   * FUZZ_SKIP_KNOWN=1 leaves out inputs of the failure classes other branches are fixing (NUL in
   * parameters and arguments, GraphQL fragment cycles and bombs, huge alias counts), to iterate on
   * the rest meanwhile. The default asserts everything.
   */
  skipKnown: process.env.FUZZ_SKIP_KNOWN === "1",
  /** Every answer within this (ms). */
  answerMs: Number(process.env.FUZZ_ANSWER_MS || 1000),
  /** /healthz, probed throughout, within this (ms). */
  healthzMs: Number(process.env.FUZZ_HEALTHZ_MS || 100),
  /** Peak server RSS at most max(factor × start, start + slack). */
  rssFactor: 2,
  rssSlackKb: 256 * 1024,
};

if (!Number.isSafeInteger(FUZZ.seed)) throw new Error(`FUZZ_SEED must be an integer (got ${seedEnv})`);
if (!(FUZZ.runs > 0)) throw new Error(`FUZZ_RUNS must be a positive number (got ${process.env.FUZZ_RUNS})`);
