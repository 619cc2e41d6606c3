// The catalog writes GraphQL mutations use, on a real catalog file: profile updates (a taken email
// refused) and the rebalance request time of user portfolios, seen by a second process's mirror;
// writes at once from one process (before its transactions took turns: 1 of 12 users kept, or
// the file's log corrupted).
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { Catalog } from "../../pipeline/store/catalog/catalog.ts";

const rules = {
  name: "P",
  description: "",
  rebalanceFrequency: 1,
  maxStocks: 3,
  maxStocksCriteria: "total_rating" as const,
  maxStocksCriteriaOrder: "descending" as const,
  maxSectorConcentration: null,
  ranges: {},
};

it("updateUser changes the given fields and refuses another user's email", async () => {
  const path = join(mkdtempSync(join(tmpdir(), "catalog-w-")), "catalog.duckdb");
  const c = await Catalog.open(path);
  const a = await c.createUser({ email: "a@example.com", firstName: "A", lastName: "One", phoneNumber: "1" });
  await c.createUser({ email: "b@example.com", firstName: "B", lastName: "Two", phoneNumber: "2" });
  const u = await c.updateUser(a.id, { firstName: "Ann", phoneNumber: "+1 555" });
  expect(u).toEqual({ id: a.id, email: "a@example.com", firstName: "Ann", lastName: "One", phoneNumber: "+1 555" });
  await expect(c.updateUser(a.id, { email: "B@example.com" })).rejects.toMatchObject({ code: "conflict" });
  expect((await Catalog.open(path)).getUser(a.id)?.firstName).toBe("Ann"); // persisted
});

it("a user portfolio's rebalance request time is set on create, moves on update, goes on delete", async () => {
  const path = join(mkdtempSync(join(tmpdir(), "catalog-w-")), "catalog.duckdb");
  const c = await Catalog.open(path);
  const u = await c.createUser({ email: "p@example.com", firstName: "P", lastName: "Q", phoneNumber: "" });
  const before = Date.now();
  const p = await c.createUserPortfolio(u.id, rules);
  const created = c.rebalanceRequestedAt(p.id)!;
  expect(Date.parse(created)).toBeGreaterThanOrEqual(before - 1000);
  await new Promise((r) => setTimeout(r, 20));
  await c.updateUserPortfolio(p.id, { ...rules, id: p.id, maxStocks: 5 });
  const updated = c.rebalanceRequestedAt(p.id)!;
  expect(Date.parse(updated)).toBeGreaterThan(Date.parse(created));
  const other = await Catalog.open(path); // another process's mirror reads the same time
  expect(other.rebalanceRequestedAt(p.id)).toBe(updated);
  await c.deleteUserPortfolio(p.id);
  expect(c.rebalanceRequestedAt(p.id)).toBeNull();
});

it("two catalogs of one process on one file take turns: no write lost, each mirror ends with every one", async () => {
  // DuckDB's file lock is per process, so nothing but the catalog itself keeps two of its
  // transactions in one process apart (a worker's and a server's catalog in one test process
  // once lost a failed rebalance's record to this: the server read PENDING for good).
  const path = join(mkdtempSync(join(tmpdir(), "catalog-w-")), "catalog.duckdb");
  const writer = await Catalog.open(path);
  const reader = await Catalog.open(path);
  const emails = Array.from({ length: 12 }, (_, i) => `u${i}@example.com`);
  let polling = true;
  const poll = (async () => {
    while (polling) {
      await reader.refresh();
      await new Promise((r) => setTimeout(r, 1));
    }
  })();
  // every write at once, from both catalogs, while the second keeps reloading
  await Promise.all(
    emails.map((email, i) =>
      (i % 2 ? writer : reader).createUser({ email, firstName: "F", lastName: "L", phoneNumber: "" }),
    ),
  );
  polling = false;
  await poll;
  await reader.refresh();
  await writer.refresh();
  for (const c of [writer, reader]) expect(emails.filter((e) => c.userByEmail(e)).length).toBe(12);
  const fresh = await Catalog.open(path);
  expect(emails.filter((e) => fresh.userByEmail(e)).length).toBe(12);
});
