// One POST of a signed body to a receiver, through the SSRF guard: connects to the checked
// address, follows no redirect (a 3xx is a failed attempt), gives up after the timeout, and reads
// at most MAX_RESPONSE_BYTES of the answer.
import http from "node:http";
import https from "node:https";
import { checkedTarget, pinnedLookup, RefusedUrl, type Resolver, systemResolver } from "./guard.ts";
import { type DeliverySettings, MAX_RESPONSE_BYTES } from "./settings.ts";

export interface PostResult {
  /** The receiver's status; null when none came (refused, unreachable, timed out). */
  status: number | null;
  error: string | null;
  latencyMs: number;
  /** The URL was refused by the guard: no attempt will ever pass until it changes. */
  refused?: boolean;
}

// Keep-alive: a receiver taking many deliveries reuses its connection (a pooled socket was
// connected to a checked address).
const agents = {
  http: new http.Agent({ keepAlive: true, maxSockets: 16 }),
  https: new https.Agent({ keepAlive: true, maxSockets: 16 }),
};

type Target = Awaited<ReturnType<typeof checkedTarget>>;

export async function postSigned(
  url: string,
  headers: Record<string, string>,
  body: string,
  s: Pick<DeliverySettings, "allowHttp" | "allowPrivate" | "timeoutMs">,
  resolve: Resolver = systemResolver,
): Promise<PostResult> {
  const started = performance.now();
  const took = () => Math.round((performance.now() - started) * 10) / 10;
  const signal = AbortSignal.timeout(s.timeoutMs);
  let target: Target;
  try {
    target = await Promise.race([checkedTarget(url, s, resolve), aborted(signal)]);
  } catch (e) {
    const refused = e instanceof RefusedUrl;
    return {
      status: null,
      error: refused ? `refused: ${(e as Error).message}` : errText(e),
      latencyMs: took(),
      refused,
    };
  }
  return send(target, headers, body, signal, took);
}

/** The POST itself, to the checked address; resolves once, with the first outcome. */
function send(
  target: Target,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
  took: () => number,
): Promise<PostResult> {
  const mod = target.url.protocol === "https:" ? https : http;
  return new Promise<PostResult>((resolveOnce) => {
    let settled = false;
    const done = (r: PostResult) => {
      if (!settled) resolveOnce(r);
      settled = true;
    };
    const req = mod.request(
      target.url,
      {
        method: "POST",
        agent: target.url.protocol === "https:" ? agents.https : agents.http,
        lookup: pinnedLookup(target.address, target.family),
        headers: { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(body) },
        signal,
      },
      (res) => readAnswer(res, (status, text) => done(answered(status, text, took()))),
    );
    req.on("error", (e) => done({ status: null, error: errText(e), latencyMs: took() }));
    req.end(body);
  });
}

/** The receiver's answer: a 2xx passes; anything else fails with its status and the start of its body. */
function answered(status: number | null, text: string, latencyMs: number): PostResult {
  const ok = status !== null && status >= 200 && status < 300;
  return { status, error: ok ? null : `HTTP ${status}${text ? `: ${text}` : ""}`, latencyMs };
}

/** Reads at most MAX_RESPONSE_BYTES of the answer (a longer one is cut off), then calls finish. */
function readAnswer(res: http.IncomingMessage, finish: (status: number | null, text: string) => void): void {
  let got = 0;
  const chunks: Buffer[] = [];
  const end = () => finish(res.statusCode ?? null, Buffer.concat(chunks).toString("utf8").slice(0, 300));
  res.on("data", (c: Buffer) => {
    if (got < MAX_RESPONSE_BYTES) chunks.push(c.subarray(0, MAX_RESPONSE_BYTES - got));
    got += c.length;
    if (got > MAX_RESPONSE_BYTES) {
      res.destroy();
      end();
    }
  });
  res.on("end", end);
  res.on("error", () => end());
}

const errText = (e: unknown) =>
  (e as Error)?.name === "TimeoutError" || (e as Error)?.name === "AbortError"
    ? "timed out"
    : String((e as Error)?.message ?? e);

function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true }));
}
