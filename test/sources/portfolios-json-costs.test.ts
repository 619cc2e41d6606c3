// costBps in portfolios.json (issue #41): 0 to 500, absent or 0 means no costs and no key at all,
// so a portfolio without costs keeps the rules text it had before costs existed.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readPortfoliosJson } from "../../pipeline/sources/portfolios-json.ts";

const read = (portfolios: object[]) => {
  const dir = mkdtempSync(join(tmpdir(), "pjson-costs-"));
  writeFileSync(join(dir, "portfolios.json"), JSON.stringify({ portfolios }));
  return readPortfoliosJson(dir);
};
const p = (id: string, over: object = {}) => ({ id, name: `P${id}`, rebalanceFrequency: 1, maxStocks: 5, ...over });

describe("portfolios.json costBps", () => {
  it("keeps a cost in (0, 500], drops 0 and absent", () => {
    const r = read([p("1", { costBps: 10 }), p("2", { costBps: 0 }), p("3"), p("4", { costBps: 500 })]);
    expect(r.rejects).toEqual([]);
    expect(r.value.portfolios.map((x) => x.costBps)).toEqual([10, undefined, undefined, 500]);
    expect(Object.keys(r.value.portfolios[1])).not.toContain("costBps");
  });

  it("rejects a cost outside 0..500, naming the field", () => {
    for (const costBps of [-1, 501, "10"]) {
      const r = read([p("1", { costBps })]);
      expect(r.rejects).toHaveLength(1);
      expect(r.rejects[0]).toMatchObject({ row: 1, column: "portfolios.0.costBps" });
    }
  });
});
