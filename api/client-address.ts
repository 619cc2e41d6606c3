// The client's address, for the failed-authentication count and the access log. Behind `hops`
// proxies that each append the address they were reached from to X-Forwarded-For (nginx's
// $proxy_add_x_forwarded_for, or one that sets it to $remote_addr), the client is the entry
// `hops` back from the right, the socket's peer being hop 0: as Express's numeric `trust proxy`.
// Entries further left were written by the client or an untrusted hop, so they are never read.
import type { IncomingHttpHeaders } from "node:http";
import { isIP } from "node:net";

interface Req {
  headers: IncomingHttpHeaders;
  socket: { remoteAddress?: string | undefined };
}

/**
 * The address `hops` back along X-Forwarded-For; with fewer entries, the leftmost one there is.
 * An entry that is not an IP address (a typo, a port, garbage) ends the walk at the hop before it,
 * so nothing but an address reaches the log or a rate-limit key. 0 hops: the socket's address.
 */
export function clientAddress(req: Req, hops: number): string | undefined {
  const socket = req.socket.remoteAddress;
  if (hops === 0) return socket;
  const header = req.headers["x-forwarded-for"]; // node joins repeated headers with ", "
  if (typeof header !== "string") return socket;
  let address = socket;
  let end = header.length;
  for (let hop = 1; hop <= hops && end >= 0; hop++) {
    const comma = end === 0 ? -1 : header.lastIndexOf(",", end - 1);
    const entry = header.slice(comma + 1, end).trim();
    if (isIP(entry) === 0) break;
    address = entry;
    end = comma;
  }
  return address;
}
