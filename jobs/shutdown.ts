// Graceful stop on SIGTERM/SIGINT: close each resource in order (HTTP first, so in-flight
// requests finish; then queues, Redis, the catalog), each bounded in time so a dead Redis cannot
// hold the process, and exit 0. A second signal exits at once.
import type { Log } from "../pipeline/stages/context.ts";

export interface Closer {
  name: string;
  close: () => Promise<unknown> | unknown;
}

export interface ShutdownOptions {
  log: Log;
  /** Upper bound for each step; the HTTP drain itself cuts idle keep-alives at once. */
  stepTimeoutMs?: number;
  exit?: (code: number) => void;
}

/** Runs the closers in order; resolves once all ran or timed out (never rejects). */
export async function closeAll(closers: Closer[], log: Log, stepTimeoutMs = 8_000): Promise<void> {
  for (const c of closers) {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<"timeout">((res) => (timer = setTimeout(() => res("timeout"), stepTimeoutMs)));
    try {
      const r = await Promise.race([Promise.resolve().then(c.close), timeout]);
      if (r === "timeout") log.warn({ step: c.name, ms: stepTimeoutMs }, "shutdown step timed out; going on");
    } catch (e) {
      log.warn({ step: c.name, err: String((e as Error)?.message ?? e) }, "shutdown step failed; going on");
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * Installs the signal handlers. `closers` is read when the signal arrives, so resources opened
 * later (the worker, the server) can be pushed onto the same array.
 */
export function onShutdown(closers: Closer[], opts: ShutdownOptions): void {
  const exit = opts.exit ?? ((code: number) => process.exit(code));
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) {
      opts.log.warn({ signal }, "second signal: exiting now");
      exit(130);
      return;
    }
    stopping = true;
    opts.log.info({ signal }, "shutting down: draining requests, closing queues, Redis and the catalog");
    void closeAll(closers, opts.log, opts.stepTimeoutMs).then(() => exit(0));
  };
  process.on("SIGTERM", handler).on("SIGINT", handler);
}
