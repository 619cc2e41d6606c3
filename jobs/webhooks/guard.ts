// No server-side request forgery: a webhook URL must be https (unless allowHttp) and every address
// its host resolves to a global unicast address (unless allowPrivate). The request then connects
// to the address that was checked (pinnedLookup), so a second DNS answer cannot switch it.
import type { LookupAddress } from "node:dns";
import { lookup as dnsLookup } from "node:dns/promises";
import { isIP, type LookupFunction } from "node:net";
import ipaddr from "ipaddr.js";
import type { DeliverySettings } from "./settings.ts";

export class RefusedUrl extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RefusedUrl";
  }
}

/**
 * Why an address is refused (its class: loopback, private, linkLocal — the cloud metadata
 * address 169.254.169.254 among them —, uniqueLocal, unspecified, multicast, carrierGradeNat,
 * reserved …), or null for a global unicast address. An IPv4-mapped IPv6 address
 * (::ffff:127.0.0.1) is judged as the IPv4 address it maps.
 */
export function refusedClass(ip: string): string | null {
  if (!ipaddr.isValid(ip)) return "not an IP address";
  let a = ipaddr.parse(ip);
  if (a.kind() === "ipv6" && (a as ipaddr.IPv6).isIPv4MappedAddress()) a = (a as ipaddr.IPv6).toIPv4Address();
  const range = a.range();
  return range === "unicast" ? null : range;
}

export type Resolver = (host: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (host) => dnsLookup(host, { all: true, verbatim: true });

/** The checked address to connect to, after the URL's scheme and every resolved address pass. */
export async function checkedTarget(
  url: string,
  s: Pick<DeliverySettings, "allowHttp" | "allowPrivate">,
  resolve: Resolver = systemResolver,
): Promise<{ url: URL; address: string; family: number }> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new RefusedUrl("not an absolute URL");
  }
  if (u.protocol !== "https:" && !(u.protocol === "http:" && s.allowHttp))
    throw new RefusedUrl(`${u.protocol.slice(0, -1)} is refused: https only`);
  const host = u.hostname.replace(/^\[(.*)\]$/, "$1");
  const addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await resolve(host);
  if (!addresses.length) throw new RefusedUrl(`${host} resolves to no address`);
  if (!s.allowPrivate)
    for (const a of addresses) {
      const why = refusedClass(a.address);
      if (why) throw new RefusedUrl(`${host} resolves to ${a.address} (${why}), which is refused`);
    }
  return { url: u, address: addresses[0].address, family: addresses[0].family };
}

/** A `lookup` for the request that answers the checked address alone (in both of its calling forms). */
export function pinnedLookup(address: string, family: number): LookupFunction {
  return ((_host: string, opts: { all?: boolean }, cb: (...a: unknown[]) => void) => {
    if (opts?.all) cb(null, [{ address, family }]);
    else cb(null, address, family);
  }) as unknown as LookupFunction;
}
