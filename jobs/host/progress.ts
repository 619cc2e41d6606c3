// Progress on a terminal for long work (cli-progress): sample generation, ingest, the stages.
// The bar is silent when stderr is not a TTY (the JSON log lines say the same to a machine);
// situation lines (waiting for a worker, Redis away, retrying…) go to stderr either way. Log lines
// written while a bar is shown go through writeAboveProgress, which clears the bar's line first
// so the two never interleave on one line.

import { createRequire } from "node:module";
import type cliProgress from "cli-progress";

export type ProgressFn = (stage: string, done: number, total: number) => void;

export interface TerminalProgress {
  update: ProgressFn;
  note: (line: string) => void;
  stop: () => void;
}

let active: cliProgress.SingleBar | null = null;

const BAR = " {stage} [{bar}] {percentage}% | {duration_formatted}";
const PHASE = " {stage} {spinner} {duration_formatted}";
const SPINNER = ["|", "/", "-", "\\"];

/** Writes a log line to stdout; with a bar on the terminal, above it. */
export function writeAboveProgress(chunk: string | Uint8Array): void {
  if (!active) {
    process.stdout.write(chunk);
    return;
  }
  process.stderr.write("\r\x1b[2K");
  process.stdout.write(chunk);
  active.render();
}

export function terminalProgress(stream: NodeJS.WriteStream = process.stderr): TerminalProgress {
  const note = (line: string) => {
    stream.write(`${stream.isTTY ? "\r\x1b[2K" : ""}${line}\n`);
    if (active) active.render();
  };
  if (!stream.isTTY) return { update: () => undefined, note, stop: () => undefined };
  // Loaded only for a terminal: piped output never draws a bar.
  const { SingleBar, Presets, Format } = createRequire(import.meta.url)("cli-progress") as typeof cliProgress;
  const bar = new SingleBar(
    {
      // A step without a count (reported as 0 or 1 of 1) is a phase: a spinner and the time
      // spent, not a bar frozen at 0 %. cli-progress redraws `fps` times a second, so it turns.
      format: (options, params, payload) =>
        Format.Formatter({ ...options, format: params.total <= 1 ? PHASE : BAR }, params, {
          ...payload,
          spinner: SPINNER[Math.floor(Date.now() / 200) % SPINNER.length],
        }),
      stream,
      hideCursor: true,
      clearOnComplete: true,
      fps: 5,
    },
    Presets.shades_classic,
  );
  let started = false;
  let shown = "";
  return {
    update(stage, done, total) {
      if (!started) {
        bar.start(Math.max(total, 1), done, { stage });
        active = bar;
        started = true;
      }
      bar.setTotal(Math.max(total, 1));
      bar.update(done, { stage });
      // cli-progress redraws at most `fps` times a second; a new stage is always drawn at once.
      if (stage !== shown) bar.render();
      shown = stage;
    },
    stop() {
      if (!started) return;
      // cli-progress restores the cursor saved at start() before clearing its line; log lines
      // printed since then would be overwritten. Save the bar's current line instead.
      stream.write("\r\x1b7");
      bar.stop();
      if (active === bar) active = null;
      started = false;
    },
    note,
  };
}
