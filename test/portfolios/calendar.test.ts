import { describe, expect, it } from "vitest";
import { addMonthsClamped, rebalanceCalendar } from "../../pipeline/portfolios/index.ts";
import { AUTUMN } from "./universe-fixture.ts";

describe("rebalance calendar", () => {
  it("counts months from the first date, clamped to month ends", () => {
    expect(addMonthsClamped("2024-01-31", 1)).toBe("2024-02-29"); // leap year
    expect(addMonthsClamped("2023-01-31", 1)).toBe("2023-02-28");
    expect(addMonthsClamped("2024-01-31", 2)).toBe("2024-03-31"); // from the first date: not 29 Mar
    expect(addMonthsClamped("2024-08-31", 6)).toBe("2025-02-28"); // across a year end
    expect(addMonthsClamped("2024-11-15", 12)).toBe("2025-11-15");
  });

  it("moves days to the next trading date, and keeps the next one unmoved", () => {
    const trading = ["2024-01-31", "2024-02-29", "2024-03-28", "2024-04-01", "2024-04-30"];
    // 31 Mar 2024 is a Sunday: moved to Mon 1 Apr; the day after the data (31 May) stays as is.
    expect(rebalanceCalendar("2024-01-31", 1, trading)).toEqual({
      scheduled: ["2024-01-31", "2024-02-29", "2024-03-31", "2024-04-30", "2024-05-31"],
      actual: ["2024-01-31", "2024-02-29", "2024-04-01", "2024-04-30"],
    });
    expect(rebalanceCalendar("2024-01-31", 3, trading)).toEqual({
      scheduled: ["2024-01-31", "2024-04-30", "2024-07-31"],
      actual: ["2024-01-31", "2024-04-30"],
    });
  });

  it("starts on a weekend month end and keeps the first date's day of month", () => {
    // Sat 31 Aug → Mon 2 Sep; 30 Sep (clamped); 31 Oct (not 30 Oct); Sat 30 Nov is past the data.
    expect(rebalanceCalendar("2024-08-31", 1, AUTUMN.dates)).toEqual({
      scheduled: ["2024-08-31", "2024-09-30", "2024-10-31", "2024-11-30"],
      actual: ["2024-09-02", "2024-09-30", "2024-10-31"],
    });
    // Every 2 months: 31 Aug, 31 Oct, then 31 Dec past the data.
    expect(rebalanceCalendar("2024-08-31", 2, AUTUMN.dates)).toEqual({
      scheduled: ["2024-08-31", "2024-10-31", "2024-12-31"],
      actual: ["2024-09-02", "2024-10-31"],
    });
  });

  it("has no days for a frequency that is not a whole positive number of months", () => {
    for (const f of [0, -1, 1.5])
      expect(rebalanceCalendar("2024-08-31", f, AUTUMN.dates)).toEqual({ scheduled: [], actual: [] });
  });
});
