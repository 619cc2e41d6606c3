// The universe a process keeps between the steps it takes of one run (the run's price panel,
// ratings and universe: GBs at 5,000 × 25). Owned by the executor's host: a flow worker process
// holds one across its jobs (a worker taking several backtests of one run loads the universe once),
// the inline executor one per run. The stages only use it (UniverseHolder, pipeline/stages/flow-steps.ts).
import type { Universe } from "../portfolios/index.ts";
import { backtestDone, readPlan, type UniverseHolder } from "../stages/flow-steps.ts";

export class UniverseCache implements UniverseHolder {
  private cached: { out: string; universe: Promise<Universe> } | null = null;

  keep(out: string, universe: Promise<Universe>): void {
    this.cached = { out, universe };
  }

  get(out: string, load: () => Promise<Universe>): Promise<Universe> {
    if (this.cached?.out !== out) {
      const universe = load();
      this.cached = { out, universe };
      // a failed read is not kept (a newer one stays)
      universe.catch(() => {
        if (this.cached?.universe === universe) this.cached = null;
      });
    }
    return this.cached.universe;
  }

  /** Whether this process holds the run's universe (its ingest built it, or a backtest loaded it). */
  holds(out: string): boolean {
    return this.cached?.out === out;
  }

  /**
   * Lets go of the universe once it can serve no more backtest here: every backtest of its run left
   * its output (or the run's plan is gone), or the job at hand is another run's. Kept, every later
   * job of the worker paid for it.
   */
  release(out: string): void {
    if (!this.cached) return;
    if (this.cached.out === out) {
      try {
        if (!readPlan(out).portfolioIds.every((id) => backtestDone(out, id))) return;
      } catch {
        // no plan: the run's folder is gone, and so is any use of its universe
      }
    }
    this.cached = null;
  }

  forget(): void {
    this.cached = null;
  }
}
