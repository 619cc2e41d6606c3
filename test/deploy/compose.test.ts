// compose.yaml, read structurally (this machine runs no Docker): the services a multi-host deployment
// needs, wired to each other. The project has no YAML dependency, so a reader of the subset the file
// uses (block maps and lists, flow lists, quoted scalars, anchors and `<<` merges) is below; it
// throws on anything else, so a construct it does not know cannot pass unread.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { ROOT } from "./replicas.ts";

type Node = string | Node[] | { [k: string]: Node } | null;
type Line = { indent: number; text: string; n: number };

function scalar(raw: string, anchors: Map<string, Node>): Node {
  const s = raw.trim();
  if (s.startsWith("*")) {
    if (!anchors.has(s.slice(1))) throw new Error(`unknown alias ${s}`);
    return anchors.get(s.slice(1)) ?? null;
  }
  if (s.startsWith("[")) return JSON.parse(s); // the file's flow lists are JSON arrays of strings
  if (/^".*"$/.test(s)) return JSON.parse(s);
  if (/^'.*'$/.test(s)) return s.slice(1, -1);
  // Compose interpolation with a default: the value a deployment without that variable gets.
  return s.replace(/\$\{(\w+):-([^}]*)\}/g, (_, _name, dflt) => dflt);
}

function block(lines: Line[], at: number, indent: number, anchors: Map<string, Node>): [Node, number] {
  if (lines[at].text.startsWith("- ")) {
    const list: Node[] = [];
    for (; at < lines.length && lines[at].indent === indent && lines[at].text.startsWith("- "); at++)
      list.push(scalar(lines[at].text.slice(2), anchors));
    return [list, at];
  }
  const map: { [k: string]: Node } = {};
  while (at < lines.length && lines[at].indent === indent) {
    const { text, n } = lines[at];
    const m = /^([\w.<-]+):(?:\s+(.*))?$/.exec(text);
    if (!m) throw new Error(`compose.yaml:${n}: not read by this test: ${text}`);
    let rest = m[2] ?? "";
    const anchor = /^&(\w[\w-]*)\s*/.exec(rest);
    if (anchor) rest = rest.slice(anchor[0].length);
    let value: Node;
    at++;
    if (rest === "") {
      const deeper = at < lines.length && lines[at].indent > indent;
      // a flow value on the next line (how the formatter folds a long one)
      if (deeper && lines[at].text.startsWith("[")) value = scalar(lines[at++].text, anchors);
      else [value, at] = deeper ? block(lines, at, lines[at].indent, anchors) : [null, at];
    } else value = scalar(rest, anchors);
    if (anchor) anchors.set(anchor[1], value);
    if (m[1] === "<<") Object.assign(map, value);
    else map[m[1]] = value;
  }
  return [map, at];
}

function readYaml(text: string): Node {
  const lines = text
    .split("\n")
    .map((l, i) => ({ indent: l.length - l.trimStart().length, text: l.replace(/(^|\s)#.*$/, "").trim(), n: i + 1 }))
    .filter((l) => l.text !== "");
  const [doc, end] = block(lines, 0, 0, new Map());
  if (end !== lines.length) throw new Error(`compose.yaml:${lines[end].n}: indentation not read by this test`);
  return doc;
}

// biome-ignore lint/suspicious/noExplicitAny: a parsed document, checked field by field below
const compose = readYaml(readFileSync(join(ROOT, "compose.yaml"), "utf8")) as any;
const services = compose.services;

it("has PostgreSQL, Redis, replicated api, workers and the proxy, and every dependency exists", () => {
  expect(Object.keys(services).sort()).toEqual(["api", "init", "postgres", "proxy", "redis", "worker"]);
  expect(Number(services.api.deploy.replicas)).toBeGreaterThanOrEqual(2);
  expect(Number(services.worker.deploy.replicas)).toBeGreaterThanOrEqual(1);
  for (const [name, s] of Object.entries<{ depends_on?: object }>(services))
    for (const dep of Object.keys(s.depends_on ?? {}))
      expect(services, `${name} depends on ${dep}`).toHaveProperty(dep);
  // The api replicas publish no port of their own: clients come through the proxy.
  expect(services.api.ports).toBeUndefined();
});

it("api and workers share one catalog URL on the postgres service, and Redis", () => {
  const pg = services.postgres.environment;
  for (const s of ["api", "worker"]) {
    const env = services[s].environment;
    const url = new URL(env.DATABASE_URL);
    expect(url.protocol).toBe("postgres:");
    expect(url.hostname).toBe("postgres");
    expect(url.username).toBe(pg.POSTGRES_USER);
    expect(url.password).toBe(pg.POSTGRES_PASSWORD);
    expect(url.pathname).toBe(`/${pg.POSTGRES_DB}`);
    expect(new URL(env.REDIS_URL).hostname).toBe("redis");
  }
});

it("volumes hold the store (every process of the service) and PostgreSQL's data", () => {
  expect(Object.keys(compose.volumes).sort()).toEqual(["pgdata", "store"]);
  for (const s of ["api", "worker", "init"]) expect(services[s].volumes).toContain("store:/app/data");
  expect(services.postgres.volumes).toContain("pgdata:/var/lib/postgresql/data");
});

it("the api believes one proxy hop: TRUST_PROXY=1, and nginx sets X-Forwarded-For to the address it saw", () => {
  expect(services.api.environment.TRUST_PROXY).toBe("1");
  const conf = readFileSync(join(ROOT, "deploy/nginx.conf"), "utf8");
  // set, not appended ($proxy_add_x_forwarded_for): the one entry is nginx's, whatever a client sent
  expect(conf.match(/proxy_set_header X-Forwarded-For (\S+);/g)).toEqual([
    "proxy_set_header X-Forwarded-For $remote_addr;",
  ]);
});

it("the proxy mounts deploy/nginx.conf, which listens on the published port and proxies to api's port", () => {
  const mounts: string[] = services.proxy.volumes;
  expect(mounts).toContain("./deploy/nginx.conf:/etc/nginx/nginx.conf:ro");
  expect(mounts).toContain("./deploy/upstream.conf:/etc/nginx/upstream.conf:ro");
  for (const m of mounts) expect(existsSync(join(ROOT, m.split(":")[0])), m).toBe(true);
  const conf = readFileSync(join(ROOT, "deploy/nginx.conf"), "utf8");
  const published = String(services.proxy.ports[0]).split(":").at(-1);
  expect(conf).toContain(`listen ${published};`);
  expect(conf).toMatch(/upstream api \{[^}]*include upstream\.conf;/);
  const upstream = readFileSync(join(ROOT, "deploy/upstream.conf"), "utf8");
  expect(upstream).toMatch(new RegExp(`^server api:${services.api.environment.PORT}\\b`, "m"));
});
