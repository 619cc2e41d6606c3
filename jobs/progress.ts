// Progress on a terminal for long work (cli-progress); silent when output is not a TTY.
import cliProgress from "cli-progress";

export function terminalProgress(): { update: (stage: string, done: number, total: number) => void; stop: () => void } {
  if (!process.stderr.isTTY) return { update: () => undefined, stop: () => undefined };
  const bar = new cliProgress.SingleBar({ format: " {stage} [{bar}] {value}/{total}", stream: process.stderr, hideCursor: true }, cliProgress.Presets.shades_classic);
  let started = false;
  return {
    update(stage, done, total) {
      if (!started) bar.start(total, done, { stage });
      started = true;
      bar.setTotal(total);
      bar.update(done, { stage });
    },
    stop: () => started && bar.stop(),
  };
}
