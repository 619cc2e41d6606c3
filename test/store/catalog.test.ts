import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hashKey } from "../../pipeline/store/catalog/api-keys.ts";
import { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { ensureDemoUser } from "../../pipeline/store/catalog/demo.ts";
import { SCOPES } from "../../pipeline/store/catalog/types.ts";

const tempCatalog = () => Catalog.open(join(mkdtempSync(join(tmpdir(), "catalog-")), "catalog.duckdb"));

describe("catalog keys", () => {
  it("stores only the SHA-256 of a key, authenticates it, and forgets it on revoke", async () => {
    const c = await tempCatalog();
    const u = await c.createUser({ email: "a@example.com", firstName: "A", lastName: "B", phoneNumber: "" });
    const { id, key, scopes } = await c.createKey(u.id, ["ratings:read", "ratings:read", "profile:read"]);
    expect(scopes).toEqual(["ratings:read", "profile:read"]);
    expect(key).toMatch(/^srk_[A-Za-z0-9_-]{43}$/);
    // sha256("abc") from FIPS 180-2, appendix B.1: the hash is the standard one.
    expect(hashKey("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(c.authenticate(key)?.user.email).toBe("a@example.com");
    expect(c.authenticate(`${key}x`)).toBeNull();
    // The plain key is nowhere in the catalog's files; its hash is.
    const dir = c.path.replace(/catalog\.duckdb$/, "");
    const bytes = readdirSync(dir)
      .map((f) => readFileSync(join(dir, f)).toString("latin1"))
      .join("");
    expect(bytes.includes(key)).toBe(false);
    expect(bytes.includes(hashKey(key))).toBe(true);
    await c.revokeKey(id);
    expect(c.authenticate(key)).toBeNull();
    expect(c.listKeys()[0].revokedAt).not.toBeNull();
  });

  it("rejects unknown scopes and sees writes made by another process's handle", async () => {
    const c = await tempCatalog();
    const u = await c.createUser({ email: "b@example.com", firstName: "", lastName: "", phoneNumber: "" });
    await expect(c.createKey(u.id, ["everything"])).rejects.toThrow(/unknown scope/);
    const other = await Catalog.open(c.path);
    const { key } = await other.createKey(u.id, ["ratings:read"]);
    expect(c.authenticate(key)).toBeNull(); // stale mirror…
    expect(await c.refresh()).toBe(true); // …until the version file says another handle wrote
    expect(c.authenticate(key)?.key.scopes).toEqual(["ratings:read"]);
  });

  it("keeps assigned ids stable across runs", async () => {
    const c = await tempCatalog();
    const a = await c.assignIds("company", ["MSFT", "AAPL"]);
    const b = await c.assignIds("company", ["ZZZ", "AAPL", "MSFT"]);
    expect([a.get("AAPL"), a.get("MSFT")]).toEqual([1, 2]);
    expect([b.get("AAPL"), b.get("MSFT"), b.get("ZZZ")]).toEqual([1, 2, 3]);
  });

  it("seeds the demo user once, with every scope and a fixed key when given", async () => {
    const c = await tempCatalog();
    const first = await ensureDemoUser(c, "demo-key-0123456789");
    expect(first.key).toBe("demo-key-0123456789");
    expect(c.authenticate("demo-key-0123456789")?.key.scopes).toEqual([...SCOPES]);
    const again = await ensureDemoUser(c, "demo-key-0123456789");
    expect(again.key).toBeNull();
    expect(c.userPortfoliosOf(first.user.id)).toHaveLength(1);
    expect(c.listKeys()).toHaveLength(1);
  });

  it("seeds the demo user when another host inserts the same DEMO_API_KEY between its read and its write", async () => {
    const dir = mkdtempSync(join(tmpdir(), "catalog-"));
    const [mine, other] = [await Catalog.open(join(dir, "c.duckdb")), await Catalog.open(join(dir, "c.duckdb"))];
    const key = "demo-key-raced-0123456789";
    await ensureDemoUser(other, null); // the demo user exists already, with another key
    await mine.refresh();
    const createKey = mine.createKey.bind(mine);
    const reload = mine.refresh.bind(mine);
    let raced = false;
    // the other host's whole start lands just before our insert, and our mirror has already reloaded
    // (a PostgreSQL NOTIFY), so refresh() finds nothing new: the retry must not depend on it
    mine.createKey = async (...args: Parameters<typeof createKey>) => {
      if (!raced) {
        raced = true;
        await ensureDemoUser(other, key);
        await reload();
      }
      return createKey(...args);
    };
    mine.refresh = async () => false;
    const r = await ensureDemoUser(mine, key);
    expect(raced).toBe(true);
    expect(r.key).toBeNull(); // the other host's insert of the same key is the one kept
    expect(mine.authenticate(key)?.user.id).toBe(r.user.id);
  });

  it("leaves the demo user one active key however often it starts: earlier generated keys are revoked", async () => {
    const c = await tempCatalog();
    const shown: string[] = [];
    for (let i = 0; i < 3; i++) shown.push((await ensureDemoUser(c, null)).key!);
    expect(new Set(shown).size).toBe(3);
    const active = c.listKeys().filter((k) => !k.revokedAt);
    expect(active).toHaveLength(1);
    expect(c.authenticate(shown[2])?.key.id).toBe(active[0].id);
    expect(c.authenticate(shown[0])).toBeNull();
    expect(c.authenticate(shown[1])).toBeNull();
    // Another user's keys are not the demo's: untouched.
    const other = await c.createUser({ email: "o@example.com", firstName: "", lastName: "", phoneNumber: "" });
    const { key: otherKey } = await c.createKey(other.id, ["ratings:read"]);
    // DEMO_API_KEY set: that key is the one; the generated one is revoked, and a second start keeps it.
    expect((await ensureDemoUser(c, "fixed-demo-key-0123456789")).key).toBe("fixed-demo-key-0123456789");
    expect((await ensureDemoUser(c, "fixed-demo-key-0123456789")).key).toBeNull();
    expect(c.authenticate(shown[2])).toBeNull();
    expect(c.authenticate("fixed-demo-key-0123456789")?.user.email).toBe("demo@example.com");
    expect(c.authenticate(otherKey)?.user.email).toBe("o@example.com");
    expect(c.listKeys().filter((k) => !k.revokedAt)).toHaveLength(2);
    // A handle opened afresh reads the same from the file.
    const reopened = await Catalog.open(c.path);
    expect(reopened.listKeys().filter((k) => !k.revokedAt && k.userId !== other.id)).toHaveLength(1);
  });
});

describe("watchlists", () => {
  it("adds without duplicates, keeps order, removes", async () => {
    const c = await tempCatalog();
    const u = await c.createUser({ email: "w@example.com", firstName: "", lastName: "", phoneNumber: "" });
    const w = await c.createWatchlist(u.id, { name: "mine", tickers: ["aapl", "MSFT"] });
    expect((await c.addToWatchlist(w.id, ["MSFT", "goog"])).tickers).toEqual(["AAPL", "MSFT", "GOOG"]);
    expect((await c.removeFromWatchlist(w.id, ["msft"])).tickers).toEqual(["AAPL", "GOOG"]);
    expect(c.watchlistsOf(u.id).map((x) => x.name)).toEqual(["mine"]);
  });
});
