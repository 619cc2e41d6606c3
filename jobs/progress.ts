// Progress on a terminal for long work (cli-progress): a bar per stage on a TTY; situation lines
// (waiting for a worker, Redis away, retrying…) on stderr either way, so a log shows them too.
import cliProgress from "cli-progress";

export interface TerminalProgress {
  update: (stage: string, done: number, total: number) => void;
  note: (line: string) => void;
  stop: () => void;
}

export function terminalProgress(stream: NodeJS.WriteStream = process.stderr): TerminalProgress {
  const note = (line: string) => stream.write(`${stream.isTTY ? "\r\x1b[K" : ""}${line}\n`);
  if (!stream.isTTY) return { update: () => undefined, note, stop: () => undefined };
  const bar = new cliProgress.SingleBar({ format: " {stage} [{bar}] {value}/{total}", stream, hideCursor: true }, cliProgress.Presets.shades_classic);
  let started = false;
  return {
    update(stage, done, total) {
      if (!started) bar.start(total, done, { stage });
      started = true;
      bar.setTotal(total);
      bar.update(done, { stage });
    },
    note,
    stop: () => started && bar.stop(),
  };
}
