// The SSRF guard: every refused address class, as literals in the URL and as what a host name
// resolves to (a resolver stub, so no DNS is asked). The classes are the IANA special-purpose
// registries' (RFC 6890 and its updates); the cloud metadata addresses are AWS/GCP/Azure's
// 169.254.169.254, AWS's IPv6 fd00:ec2::254 and Alibaba's 100.100.100.200.
import { describe, expect, it } from "vitest";
import { checkedTarget, RefusedUrl, refusedClass } from "../../jobs/webhooks/guard.ts";

const STRICT = { allowHttp: false, allowPrivate: false };
const REFUSED: [string, string][] = [
  ["127.0.0.1", "loopback"],
  ["127.255.255.254", "loopback"],
  ["::1", "loopback"],
  ["10.1.2.3", "private"],
  ["172.16.0.1", "private"],
  ["172.31.255.255", "private"],
  ["192.168.1.1", "private"],
  ["169.254.169.254", "linkLocal"],
  ["169.254.0.1", "linkLocal"],
  ["fe80::1", "linkLocal"],
  ["fd00:ec2::254", "uniqueLocal"],
  ["fc00::1", "uniqueLocal"],
  ["100.100.100.200", "carrierGradeNat"],
  ["0.0.0.0", "unspecified"],
  ["::", "unspecified"],
  ["224.0.0.1", "multicast"],
  ["239.255.255.250", "multicast"],
  ["ff02::1", "multicast"],
  ["255.255.255.255", "broadcast"],
  ["::ffff:127.0.0.1", "loopback"],
  ["::ffff:169.254.169.254", "linkLocal"],
  ["::ffff:10.0.0.1", "private"],
  ["::ffff:7f00:1", "loopback"],
  ["64:ff9b::7f00:1", "rfc6052"],
  ["2002:7f00:1::", "6to4"],
  ["2001:db8::1", "reserved"],
  ["192.0.2.1", "reserved"],
];

describe("refusedClass", () => {
  it.each(REFUSED)("%s is %s", (ip, cls) => {
    expect(refusedClass(ip)).toBe(cls);
  });
  it("global unicast addresses pass (IPv4, IPv6, an IPv4-mapped public one)", () => {
    for (const ip of ["93.184.215.14", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"])
      expect(refusedClass(ip), ip).toBeNull();
  });
});

describe("checkedTarget", () => {
  const stub = (answers: Record<string, string[]>) => async (host: string) =>
    (answers[host] ?? []).map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));

  it.each(REFUSED)("a URL with the literal %s is refused", async (ip) => {
    const host = ip.includes(":") ? `[${ip}]` : ip;
    await expect(checkedTarget(`https://${host}/hook`, STRICT, stub({}))).rejects.toBeInstanceOf(RefusedUrl);
  });

  it.each(REFUSED)("a host name resolving to %s is refused", async (ip) => {
    const resolve = stub({ "hooks.example.com": [ip] });
    await expect(checkedTarget("https://hooks.example.com/x", STRICT, resolve)).rejects.toThrow(/refused/);
  });

  it("one refused address among several refuses the host (a rebinding answer cannot slip one in)", async () => {
    const resolve = stub({ "mixed.example.com": ["93.184.215.14", "127.0.0.1"] });
    await expect(checkedTarget("https://mixed.example.com/", STRICT, resolve)).rejects.toThrow(/127\.0\.0\.1/);
  });

  it("the URL parser's other spellings of loopback are refused (decimal, hex, short forms)", async () => {
    for (const u of ["https://2130706433/", "https://0x7f.1/", "https://127.1/", "https://[::ffff:7f00:1]/"])
      await expect(checkedTarget(u, STRICT, stub({})), u).rejects.toBeInstanceOf(RefusedUrl);
  });

  it("http is refused unless allowed; other schemes always", async () => {
    const resolve = stub({ "a.example.com": ["93.184.215.14"] });
    await expect(checkedTarget("http://a.example.com/", STRICT, resolve)).rejects.toThrow(/https only/);
    await expect(checkedTarget("ftp://a.example.com/", { ...STRICT, allowHttp: true }, resolve)).rejects.toThrow();
    const ok = await checkedTarget("http://a.example.com/", { ...STRICT, allowHttp: true }, resolve);
    expect(ok.address).toBe("93.184.215.14");
  });

  it("a public address passes and is the one to connect to; allowPrivate lets loopback through", async () => {
    const resolve = stub({ "b.example.com": ["2606:4700:4700::1111"], "local.test": ["127.0.0.1"] });
    expect(await checkedTarget("https://b.example.com/", STRICT, resolve)).toMatchObject({
      address: "2606:4700:4700::1111",
      family: 6,
    });
    await expect(checkedTarget("https://local.test/", STRICT, resolve)).rejects.toThrow(/loopback/);
    const loose = await checkedTarget("https://local.test/", { ...STRICT, allowPrivate: true }, resolve);
    expect(loose.address).toBe("127.0.0.1");
  });

  it("a host that resolves to nothing is refused", async () => {
    await expect(checkedTarget("https://nowhere.example.com/", STRICT, stub({}))).rejects.toThrow(/no address/);
  });
});
