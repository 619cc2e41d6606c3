import { describe, expect, it } from "vitest";
import {
  epochDay,
  epochDayOfIso,
  isoFromEpochDay,
  isoPlusMonths,
  lastEpochDayOfMonth,
  minusMonths,
  weekday,
} from "../../pipeline/shared/dates.ts";

// Expected values from a calendar: 2000-03-01 is day 11,017 since 1970-01-01 (30 years of which 7
// leap years, 1972–1996: 30 × 365 + 7 = 10,957, plus 31 + 29 days of 2000); 2024-02-29 a Thursday.
describe("dates", () => {
  it("counts days since 1970-01-01 both ways", () => {
    expect(epochDay(1970, 1, 1)).toBe(0);
    expect(epochDay(2000, 3, 1)).toBe(11_017);
    expect(epochDayOfIso("2000-03-01")).toBe(11_017);
    expect(isoFromEpochDay(11_016)).toBe("2000-02-29");
    expect(weekday(epochDayOfIso("2024-02-29"))).toBe(4);
    expect(weekday(-1)).toBe(3); // 1969-12-31, a Wednesday
  });

  it("adds months with the day clamped to the month's end, across years and backwards", () => {
    expect(isoPlusMonths("2024-01-31", 1)).toBe("2024-02-29");
    expect(isoPlusMonths("2023-12-31", 2)).toBe("2024-02-29");
    expect(isoPlusMonths("2024-03-31", -1)).toBe("2024-02-29");
    expect(isoPlusMonths("2024-05-15", -17)).toBe("2022-12-15");
    expect(minusMonths(2024, 3, 31, 12)).toBe(epochDayOfIso("2023-03-31"));
    expect(minusMonths(2024, 2, 29, 12)).toBe(epochDayOfIso("2023-02-28"));
  });

  it("names the last day of a month", () => {
    expect(isoFromEpochDay(lastEpochDayOfMonth(2024, 2))).toBe("2024-02-29");
    expect(isoFromEpochDay(lastEpochDayOfMonth(2025, 12))).toBe("2025-12-31");
    // century years leap only every 400 years
    expect(isoPlusMonths("1900-01-31", 1)).toBe("1900-02-28");
    expect(isoPlusMonths("2000-01-31", 1)).toBe("2000-02-29");
  });
});
