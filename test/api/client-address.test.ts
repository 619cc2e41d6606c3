// api/client-address.ts: the client's address behind `hops` trusted proxies. The expected values
// follow Express's numeric `trust proxy` (proxy-addr: the socket's peer is hop 0, X-Forwarded-For
// is read from the right, and a chain shorter than the hops gives its leftmost entry), worked out
// by hand for each header below.
import { describe, expect, it } from "vitest";
import { clientAddress } from "../../api/client-address.ts";

const req = (xff: string | undefined, socket: string | undefined = "10.0.0.2") => ({
  headers: xff === undefined ? {} : { "x-forwarded-for": xff },
  socket: { remoteAddress: socket },
});

describe("clientAddress", () => {
  it("0 hops: the socket's address, whatever the header says", () => {
    expect(clientAddress(req("203.0.113.9"), 0)).toBe("10.0.0.2");
    expect(clientAddress(req(undefined), 0)).toBe("10.0.0.2");
    // a closed socket has no address
    expect(clientAddress({ headers: {}, socket: { remoteAddress: undefined } }, 0)).toBeUndefined();
  });

  it("1 hop: the rightmost entry, the one the trusted proxy wrote; spoofed entries to its left are ignored", () => {
    expect(clientAddress(req("198.51.100.7"), 1)).toBe("198.51.100.7");
    // a client sent "X-Forwarded-For: 1.2.3.4, 5.6.7.8" and a proxy appended the address it saw
    expect(clientAddress(req("1.2.3.4, 5.6.7.8, 198.51.100.7"), 1)).toBe("198.51.100.7");
    expect(clientAddress(req("1.2.3.4,198.51.100.7"), 1)).toBe("198.51.100.7");
    expect(clientAddress(req(" 2001:db8::1 "), 1)).toBe("2001:db8::1");
  });

  it("n hops: n entries back from the right; a shorter chain gives its leftmost entry", () => {
    const chain = "192.0.2.1, 192.0.2.2, 192.0.2.3";
    expect(clientAddress(req(chain), 2)).toBe("192.0.2.2");
    expect(clientAddress(req(chain), 3)).toBe("192.0.2.1");
    expect(clientAddress(req(chain), 5)).toBe("192.0.2.1");
  });

  it("no header, or an empty one: the socket's address", () => {
    expect(clientAddress(req(undefined), 1)).toBe("10.0.0.2");
    expect(clientAddress(req(""), 1)).toBe("10.0.0.2");
    expect(clientAddress(req("   "), 2)).toBe("10.0.0.2");
  });

  it("an entry that is not an IP address ends the walk at the hop before it", () => {
    expect(clientAddress(req("garbage"), 1)).toBe("10.0.0.2");
    expect(clientAddress(req("198.51.100.7:4431"), 1)).toBe("10.0.0.2"); // a port: not an address
    expect(clientAddress(req("unknown, 198.51.100.7"), 2)).toBe("198.51.100.7");
    expect(clientAddress(req("192.0.2.1,,198.51.100.7"), 3)).toBe("198.51.100.7"); // an empty entry
    expect(clientAddress(req("192.0.2.1, 198.51.100.7,"), 1)).toBe("10.0.0.2"); // a trailing comma
    expect(clientAddress(req(`${"9".repeat(10_000)}, 198.51.100.7`), 2)).toBe("198.51.100.7");
    expect(clientAddress(req("999.1.1.1"), 1)).toBe("10.0.0.2");
  });
});
