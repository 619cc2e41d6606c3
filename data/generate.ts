// The deterministic sample source (contract §2 layout): companies, prices, ratings, benchmarks,
// SimFin-layout fundamentals and portfolios.json, all from one seed. No downloads, no clock.
//   npm run generate -- [--out store/sample] [--seed N] [--companies N] [--years N] [--vendor-ratings] [--plant-ic X]
// Without --vendor-ratings there is no ratings.csv: the pipeline rates the sample with its factor model.
import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { lastEpochDayOfMonth } from "../pipeline/shared/dates.ts";
import { buildCalendar, END_YEAR } from "./generator/calendar.ts";
import { buildCompanies } from "./generator/companies.ts";
import { buildFundamentals, HEADERS, type StatementRow, statementLine } from "./generator/fundamentals.ts";
import { BENCHMARK_SERIES, portfoliosJson } from "./generator/portfolios.ts";
import { capWeightedIndex, simulatePrices } from "./generator/prices.ts";
import { computeRatings, RATING_COLUMNS } from "./generator/ratings.ts";
import { plantMomentumSignal } from "./generator/signal.ts";
import { ChunkWriter, csvField, fmt2, fmt4, fmtPrice } from "./generator/write.ts";

export const DEFAULTS = { seed: 42, companies: 500, years: 15 };

export interface GenerateOptions {
  seed?: number;
  companies?: number;
  years?: number;
  /**
   * Write the vendor-style ratings.csv (generator/ratings.ts). Default off: the sample brings no
   * ratings, so the pipeline serves its factor model's (pipeline/ratings/model.ts).
   */
  vendorRatings?: boolean;
  /** Plant a link of this Spearman IC between 12-1 month momentum and the next month's return (generator/signal.ts). */
  plantIc?: number;
  /** Called as each of the steps (simulation, then one per file) begins, for a terminal bar. */
  progress?: (stage: string, done: number, total: number) => void;
}

// 5 simulation steps, then 11 files (4 tables, 6 statements, portfolios.json); 10 without ratings.csv.
const STEPS = 16;

type Progress = (what: string) => void;

/** The simulated sample: calendar, companies, prices, statements, ratings and the benchmark index. */
function simulate(seed: number, nCompanies: number, years: number, opts: GenerateOptions, progress: Progress) {
  const startYear = END_YEAR - years + 1;
  progress("companies");
  const cal = buildCalendar(startYear);
  const companies = buildCompanies(seed, nCompanies, cal);
  progress("prices");
  const panel = simulatePrices(seed, cal, companies);
  // before anything reads the prices: the statements respond to the returns as planted
  if (opts.plantIc !== undefined) plantMomentumSignal(panel, cal, opts.plantIc);
  progress("fundamentals");
  const endDay = lastEpochDayOfMonth(END_YEAR, 12);
  const fundamentals = buildFundamentals(seed, companies, startYear, endDay, cal, panel.close);
  // Ratings begin with the first trading date of the second year: a year of history behind them.
  progress("ratings");
  const ratings = opts.vendorRatings
    ? computeRatings(cal, companies, panel.close, fundamentals, cal.monthStarts[12])
    : null;
  progress("index");
  const index = capWeightedIndex(panel, companies, cal.dates.length);
  return { cal, companies, panel, fundamentals, ratings, index };
}
type Sample = ReturnType<typeof simulate>;

/** Writes one CSV file of the sample (the header, then the lines `body` writes). */
type WriteCsv = (name: string, header: string, body: (w: ChunkWriter) => void) => Promise<void>;

async function writeMarketTables(csv: WriteCsv, { cal, companies, panel, ratings, index }: Sample): Promise<void> {
  await csv("companies.csv", "id,ticker,name,sector,industry,shares_outstanding,market_cap", (w) => {
    companies.forEach((c, i) => {
      const last = panel.close[i][c.delistIndex];
      w.line(
        `${c.id},${c.ticker},${csvField(c.name)},${csvField(c.sector)},${csvField(c.industry)},${c.sharesOutstanding}` +
          `,${Math.round(c.sharesOutstanding * last)}`,
      );
    });
  });
  await csv("prices.csv", "date,open,high,low,close,volume,ticker", (w) => {
    companies.forEach((c, i) => {
      const { open, high, low, close, volume } = panel;
      for (let t = c.listIndex; t <= c.delistIndex; t++) {
        w.line(
          `${cal.dates[t]},${fmtPrice(open[i][t])},${fmtPrice(high[i][t])},${fmtPrice(low[i][t])},` +
            `${fmtPrice(close[i][t])},${volume[i][t]},${c.ticker}`,
        );
      }
    });
  });
  if (ratings)
    await csv("ratings.csv", `date,ticker,${RATING_COLUMNS.join(",")}`, (w) => {
      ratings.dateIndex.forEach((d, k) => {
        const { company, values } = ratings.rows[k];
        const date = cal.dates[d];
        company.forEach((i, j) => {
          const v = values[j];
          let s = `${date},${companies[i].ticker}`;
          for (let x = 0; x < v.length; x++) s += `,${fmt4(v[x])}`;
          w.line(s);
        });
      });
    });
  await csv("benchmarks.csv", "date,benchmark,close", (w) => {
    for (let t = 0; t < cal.dates.length; t++) w.line(`${cal.dates[t]},${BENCHMARK_SERIES},${fmt2(index[t])}`);
  });
}

async function writeStatements(csv: WriteCsv, { fundamentals }: Sample): Promise<void> {
  const statements: [string, string, StatementRow[]][] = [
    ["us-income-annual.csv", HEADERS.income, fundamentals.income.annual],
    ["us-income-quarterly.csv", HEADERS.income, fundamentals.income.quarterly],
    ["us-balance-annual.csv", HEADERS.balance, fundamentals.balance.annual],
    ["us-balance-quarterly.csv", HEADERS.balance, fundamentals.balance.quarterly],
    ["us-cashflow-annual.csv", HEADERS.cashflow, fundamentals.cashflow.annual],
    ["us-cashflow-quarterly.csv", HEADERS.cashflow, fundamentals.cashflow.quarterly],
  ];
  for (const [name, header, rows] of statements)
    await csv(`fundamentals/${name}`, header, (w) => {
      for (const r of rows) w.line(statementLine(r));
    });
}

function checkOptions(opts: GenerateOptions): { seed: number; nCompanies: number; years: number } {
  if (opts.plantIc !== undefined && !(Math.abs(opts.plantIc) < 1)) throw new Error("plant-ic must be between -1 and 1");
  const seed = opts.seed ?? DEFAULTS.seed;
  const nCompanies = opts.companies ?? DEFAULTS.companies;
  const years = opts.years ?? DEFAULTS.years;
  if (!Number.isInteger(seed)) throw new Error("seed must be an integer");
  if (!Number.isInteger(nCompanies) || nCompanies < 20) throw new Error("companies must be an integer >= 20");
  if (!Number.isInteger(years) || years < 2 || years > 40) throw new Error("years must be an integer from 2 to 40");
  return { seed, nCompanies, years };
}

export async function generateSample(
  outDir: string,
  opts: GenerateOptions = {},
): Promise<{ outDir: string; files: string[]; ms: number }> {
  const t0 = performance.now();
  const { seed, nCompanies, years } = checkOptions(opts);
  let step = 0;
  const steps = opts.vendorRatings ? STEPS : STEPS - 1;
  const progress: Progress = (what) => opts.progress?.(`sample: ${what}`, step++, steps);
  const sample = simulate(seed, nCompanies, years, opts, progress);

  const out = resolve(outDir);
  await mkdir(join(out, "fundamentals"), { recursive: true });
  const files: string[] = [];
  const csv: WriteCsv = async (name, header, body) => {
    progress(`writing ${name}`);
    const w = await ChunkWriter.create(join(out, name));
    w.line(header);
    body(w);
    await w.close();
    files.push(name);
  };
  await writeMarketTables(csv, sample);
  await writeStatements(csv, sample);

  progress("writing portfolios.json");
  await writeFile(join(out, "portfolios.json"), portfoliosJson());
  opts.progress?.("sample: done", steps, steps);
  files.push("portfolios.json");
  files.sort();
  return { outDir: out, files, ms: Math.round(performance.now() - t0) };
}

function parseArgs(argv: string[]): { out: string } & GenerateOptions {
  const args: { out: string } & GenerateOptions = { out: "store/sample" };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    const int = (v: string) => {
      if (!/^-?\d+$/.test(v)) throw new Error(`${a} must be an integer`);
      return Number(v);
    };
    if (a === "--out") args.out = next();
    else if (a === "--seed") args.seed = int(next());
    else if (a === "--companies") args.companies = int(next());
    else if (a === "--years") args.years = int(next());
    else if (a === "--vendor-ratings") args.vendorRatings = true;
    else if (a === "--plant-ic") {
      const v = next();
      if (!/^-?\d*\.?\d+$/.test(v)) throw new Error(`${a} must be a number`);
      args.plantIc = Number(v);
    } else if (a === "--help" || a === "-h") {
      console.log(
        "usage: npm run generate -- [--out DIR] [--seed N] [--companies N] [--years N] [--vendor-ratings] " +
          "[--plant-ic X]",
      );
      process.exit(0);
    } else throw new Error(`unknown argument ${a}`);
  }
  return args;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  try {
    const { out, ...opts } = parseArgs(process.argv.slice(2));
    const res = await generateSample(out, opts);
    console.log(`sample source written to ${res.outDir} in ${res.ms} ms: ${res.files.join(", ")}`);
  } catch (e) {
    console.error(`generate: ${(e as Error).message}`);
    process.exit(1);
  }
}
