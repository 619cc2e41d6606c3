// Test hosts on one machine: each host is a network namespace with its own address on a private
// bridge (10.<n>.0.0/24), joined to it by a veth pair. A process started on a host sees only that
// network; every host sees the same file system, which stands for a volume they all mount. Cutting
// a host takes its bridge-side link down: its processes live on, unreachable, as after a pulled
// cable; healing brings the link back. Needs root and iproute2 (`available()` says why not).
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const ROOT = join(import.meta.dirname, "../..");

/** Why hosts cannot be made here, or null when they can. */
export function unavailable(): string | null {
  if (process.getuid?.() !== 0) return "network namespaces need root";
  const r = spawnSync("ip", ["netns", "list"], { encoding: "utf8" });
  if (r.error || r.status !== 0) return `ip netns does not work here: ${r.error?.message ?? r.stderr.trim()}`;
  return null;
}

/** Debian's PostgreSQL server binaries (the newest installed). */
export function postgresBin(): string {
  const root = "/usr/lib/postgresql";
  const v = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a))[0] : undefined;
  if (!v || !existsSync(join(root, v, "bin", "postgres"))) throw new Error(`no PostgreSQL server under ${root}`);
  return join(root, v, "bin");
}

function pgUser(): { uid: number; gid: number } {
  const out = execFileSync("id", ["postgres"], { encoding: "utf8" });
  return { uid: Number(/uid=(\d+)/.exec(out)![1]), gid: Number(/gid=(\d+)/.exec(out)![1]) };
}

const ip = (...args: string[]) => execFileSync("ip", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

export interface HostProc {
  child: ChildProcess;
  output(): string;
  waitFor(pattern: RegExp, ms?: number): Promise<RegExpExecArray>;
  exited(): Promise<number | null>;
}

export class Topology {
  /** Short: interface names have at most 15 characters. */
  readonly tag = randomBytes(2).toString("hex");
  readonly bridge = `mh${this.tag}br`;
  readonly net = 100 + (randomBytes(1)[0] % 100);
  readonly gateway = `10.${this.net}.0.1`;
  private readonly hosts = new Map<string, { ns: string; veth: string; address: string }>();
  private readonly procs: ChildProcess[] = [];

  constructor() {
    ip("link", "add", this.bridge, "type", "bridge");
    ip("addr", "add", `${this.gateway}/24`, "dev", this.bridge);
    ip("link", "set", this.bridge, "up");
  }

  /** A new host with the next address; returns that address. */
  add(name: string): string {
    const i = this.hosts.size + 2;
    const ns = `mh${this.tag}-${name}`;
    const veth = `mh${this.tag}v${i}`;
    const address = `10.${this.net}.0.${i}`;
    ip("netns", "add", ns);
    ip("link", "add", veth, "type", "veth", "peer", "name", `${veth}p`);
    ip("link", "set", `${veth}p`, "netns", ns);
    ip("link", "set", veth, "master", this.bridge);
    ip("link", "set", veth, "up");
    ip("-n", ns, "link", "set", "lo", "up");
    ip("-n", ns, "link", "set", `${veth}p`, "name", "eth0");
    ip("-n", ns, "addr", "add", `${address}/24`, "dev", "eth0");
    ip("-n", ns, "link", "set", "eth0", "up");
    ip("-n", ns, "route", "add", "default", "via", this.gateway);
    this.hosts.set(name, { ns, veth, address });
    return address;
  }

  address(name: string): string {
    return this.host(name).address;
  }

  /** The host drops off the network; its processes keep running. */
  cut(name: string): void {
    ip("link", "set", this.host(name).veth, "down");
  }

  heal(name: string): void {
    ip("link", "set", this.host(name).veth, "up");
  }

  /** Runs `cmd` on the host; stdout and stderr collected, interleaved. */
  start(name: string, cmd: string, args: string[], env: Record<string, string> = {}): HostProc {
    const child = spawn("ip", ["netns", "exec", this.host(name).ns, cmd, ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.procs.push(child);
    let out = "";
    child.stdout!.on("data", (b) => (out += b));
    child.stderr!.on("data", (b) => (out += b));
    const exit = new Promise<number | null>((res) => child.on("exit", (code) => res(code)));
    return {
      child,
      output: () => out,
      exited: () => exit,
      waitFor: (pattern, ms = 120_000) =>
        new Promise((res, rej) => {
          const t = setTimeout(() => {
            clearInterval(i);
            rej(new Error(`${name}: no ${pattern} within ${ms} ms; output:\n${out.slice(-4000)}`));
          }, ms);
          const i = setInterval(() => {
            const m = pattern.exec(out);
            if (!m) return;
            clearTimeout(t);
            clearInterval(i);
            res(m);
          }, 50);
        }),
    };
  }

  /**
   * A PostgreSQL server of its own on the host (a fresh cluster in a temp folder, trust auth for the
   * hosts' network), started as the `postgres` user; resolves to its URL once it accepts connections.
   */
  async startPostgres(name: string): Promise<string> {
    const bin = postgresBin();
    const dir = mkdtempSync(join(tmpdir(), "multihost-pg-"));
    chownSync(dir, pgUser().uid, pgUser().gid);
    const asPg = (cmd: string, args: string[]) =>
      execFileSync("runuser", ["-u", "postgres", "--", join(bin, cmd), ...args], { stdio: "ignore" });
    asPg("initdb", ["-D", join(dir, "data"), "-A", "trust", "-U", "postgres"]);
    appendFileSync(join(dir, "data", "pg_hba.conf"), `host all all 10.${this.net}.0.0/24 trust\n`);
    const pg = this.start(name, "runuser", [
      ...["-u", "postgres", "--", join(bin, "postgres"), "-D", join(dir, "data")],
      ...["-c", "listen_addresses=*", "-c", "port=5432", "-c", `unix_socket_directories=${dir}`, "-c", "fsync=off"],
    ]);
    await pg.waitFor(/ready to accept connections/, 60_000);
    return `postgres://postgres@${this.address(name)}:5432/postgres`;
  }

  /** Kills every process started on a host, then removes the hosts and the bridge. */
  async destroy(): Promise<void> {
    for (const p of this.procs) if (p.exitCode === null && p.signalCode === null) p.kill("SIGKILL");
    // and every process left in a host (postgres is runuser's child: killing runuser orphans it)
    for (const { ns } of this.hosts.values()) {
      const pids = spawnSync("ip", ["netns", "pids", ns], { encoding: "utf8" }).stdout.split(/\s+/).filter(Boolean);
      for (const pid of pids) spawnSync("kill", ["-KILL", pid]);
    }
    await new Promise((r) => setTimeout(r, 200));
    for (const { ns } of this.hosts.values()) spawnSync("ip", ["netns", "del", ns]);
    spawnSync("ip", ["link", "del", this.bridge]);
  }

  private host(name: string) {
    const h = this.hosts.get(name);
    if (!h) throw new Error(`no host ${name}`);
    return h;
  }
}
