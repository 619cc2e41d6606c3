// Rating evidence rows for the fixture snapshot (api and web tests): arbitrary numbers, two
// evaluated dates for every rating and horizon but the baseline at 12 months, which has none.
import { EVIDENCE_RATINGS, HORIZONS, type RatingEvidence } from "../../pipeline/ratings/evidence.ts";

export function evidenceRows(): RatingEvidence[] {
  return HORIZONS.flatMap((horizon) =>
    EVIDENCE_RATINGS.map((rating, k): RatingEvidence => {
      if (horizon === 12 && rating === "momentum_12_1_baseline")
        return {
          rating,
          horizon,
          dates: 0,
          meanIc: null,
          icStd: null,
          icir: null,
          tStat: null,
          hitRate: null,
          quintileReturns: [],
          spread: null,
          topTurnover: null,
          ic: [],
        };
      const a = k / 100;
      return {
        rating,
        horizon,
        dates: 2,
        meanIc: a,
        icStd: 0.25,
        icir: a / 0.25,
        tStat: (a / 0.25) * Math.SQRT2,
        hitRate: 0.5,
        quintileReturns: [-0.01, 0, 0.005, 0.01, 0.02 + a],
        spread: 0.03 + a,
        topTurnover: 0.4,
        ic: [
          { date: "2020-01-02", ic: a - 0.1, stocks: 40 + horizon },
          { date: "2020-02-03", ic: a + 0.1, stocks: 41 },
        ],
      };
    }),
  );
}
