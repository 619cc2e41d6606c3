// The synthetic universe: GICS sectors and industries, names, tickers, shares and the per-company
// parameters the price and statement models use.
import type { Calendar } from "./calendar.ts";
import { Rng } from "./random.ts";

export interface SectorDef {
  name: string;
  /** Share of the universe (about the S&P 500 mix). */
  weight: number;
  industries: string[];
  /** Words that fit the sector in a company name. */
  words: string[];
  suffixes: string[];
  /** Mean price-to-sales ratio at the start. */
  ps: number;
  grossMargin: number;
  sga: number;
  rd: number;
  capex: number;
  /** Property, plant & equipment per unit of annual revenue. */
  ppeIntensity: number;
  /** Days of revenue in receivables, days of cost in inventories. */
  dso: number;
  dio: number;
  /** Mean yearly revenue growth. */
  growth: number;
  beta: number;
  idioVol: number;
  dividendProb: number;
}

export const SECTORS: SectorDef[] = [
  {
    name: "Information Technology",
    weight: 70,
    industries: [
      "Software",
      "IT Services",
      "Semiconductors & Semiconductor Equipment",
      "Technology Hardware Storage & Peripherals",
      "Communications Equipment",
      "Electronic Equipment Instruments & Components",
    ],
    words: [
      "Systems",
      "Software",
      "Digital",
      "Micro",
      "Networks",
      "Data",
      "Semiconductor",
      "Computing",
      "Logic",
      "Technologies",
      "Labs",
      "Cloud",
    ],
    suffixes: ["Inc", "Corp", "Technologies Inc", "Holdings Inc"],
    ps: 4.5,
    grossMargin: 0.6,
    sga: 0.22,
    rd: 0.14,
    capex: 0.04,
    ppeIntensity: 0.25,
    dso: 60,
    dio: 40,
    growth: 0.1,
    beta: 1.2,
    idioVol: 0.3,
    dividendProb: 0.45,
  },
  {
    name: "Health Care",
    weight: 62,
    industries: [
      "Pharmaceuticals",
      "Biotechnology",
      "Health Care Equipment & Supplies",
      "Health Care Providers & Services",
      "Life Sciences Tools & Services",
      "Health Care Technology",
    ],
    words: [
      "Health",
      "Pharma",
      "Therapeutics",
      "Medical",
      "Bio",
      "Life Sciences",
      "Diagnostics",
      "Care",
      "Genomics",
      "Surgical",
    ],
    suffixes: ["Inc", "Corp", "Holdings", "plc"],
    ps: 3.2,
    grossMargin: 0.55,
    sga: 0.25,
    rd: 0.1,
    capex: 0.04,
    ppeIntensity: 0.3,
    dso: 55,
    dio: 80,
    growth: 0.07,
    beta: 0.9,
    idioVol: 0.28,
    dividendProb: 0.5,
  },
  {
    name: "Financials",
    weight: 70,
    industries: ["Banks", "Capital Markets", "Insurance", "Consumer Finance", "Financial Services"],
    words: [
      "Financial",
      "Bancorp",
      "Capital",
      "Trust",
      "Insurance",
      "Assurance",
      "Partners",
      "Credit",
      "Asset Management",
      "Securities",
    ],
    suffixes: ["Inc", "Corp", "Group", "Holdings", "Co"],
    ps: 2.6,
    grossMargin: 0.7,
    sga: 0.35,
    rd: 0,
    capex: 0.02,
    ppeIntensity: 0.1,
    dso: 90,
    dio: 0,
    growth: 0.05,
    beta: 1.1,
    idioVol: 0.22,
    dividendProb: 0.85,
  },
  {
    name: "Consumer Discretionary",
    weight: 55,
    industries: [
      "Specialty Retail",
      "Hotels Restaurants & Leisure",
      "Automobiles",
      "Automobile Components",
      "Textiles Apparel & Luxury Goods",
      "Household Durables",
      "Broadline Retail",
      "Distributors",
    ],
    words: [
      "Brands",
      "Retail",
      "Motors",
      "Apparel",
      "Home",
      "Leisure",
      "Resorts",
      "Outfitters",
      "Stores",
      "Restaurants",
      "Auto",
    ],
    suffixes: ["Inc", "Corp", "Co", "Group", "International"],
    ps: 1.6,
    grossMargin: 0.38,
    sga: 0.24,
    rd: 0,
    capex: 0.04,
    ppeIntensity: 0.35,
    dso: 20,
    dio: 70,
    growth: 0.06,
    beta: 1.15,
    idioVol: 0.3,
    dividendProb: 0.55,
  },
  {
    name: "Communication Services",
    weight: 22,
    industries: [
      "Media",
      "Entertainment",
      "Interactive Media & Services",
      "Diversified Telecommunication Services",
      "Wireless Telecommunication Services",
    ],
    words: [
      "Media",
      "Communications",
      "Broadcasting",
      "Telecom",
      "Entertainment",
      "Wireless",
      "Interactive",
      "Studios",
    ],
    suffixes: ["Inc", "Corp", "Holdings", "Group"],
    ps: 2.8,
    grossMargin: 0.5,
    sga: 0.25,
    rd: 0.04,
    capex: 0.1,
    ppeIntensity: 0.6,
    dso: 50,
    dio: 10,
    growth: 0.06,
    beta: 1.0,
    idioVol: 0.28,
    dividendProb: 0.5,
  },
  {
    name: "Industrials",
    weight: 75,
    industries: [
      "Aerospace & Defense",
      "Machinery",
      "Building Products",
      "Electrical Equipment",
      "Industrial Conglomerates",
      "Commercial Services & Supplies",
      "Professional Services",
      "Ground Transportation",
      "Air Freight & Logistics",
      "Passenger Airlines",
      "Construction & Engineering",
      "Trading Companies & Distributors",
    ],
    words: [
      "Industries",
      "Aerospace",
      "Machinery",
      "Engineering",
      "Logistics",
      "Rail",
      "Controls",
      "Equipment",
      "Manufacturing",
      "Air Lines",
      "Services",
      "Tool",
    ],
    suffixes: ["Inc", "Corp", "Co", "Holdings", "Group"],
    ps: 1.8,
    grossMargin: 0.33,
    sga: 0.15,
    rd: 0.02,
    capex: 0.04,
    ppeIntensity: 0.4,
    dso: 60,
    dio: 75,
    growth: 0.05,
    beta: 1.05,
    idioVol: 0.24,
    dividendProb: 0.75,
  },
  {
    name: "Consumer Staples",
    weight: 35,
    industries: [
      "Beverages",
      "Food Products",
      "Household Products",
      "Personal Care Products",
      "Consumer Staples Distribution & Retail",
      "Tobacco",
    ],
    words: ["Foods", "Beverage", "Farms", "Household", "Brands", "Grocers", "Mills", "Bottling", "Consumer Products"],
    suffixes: ["Inc", "Co", "Corp", "Company"],
    ps: 1.7,
    grossMargin: 0.4,
    sga: 0.24,
    rd: 0.01,
    capex: 0.035,
    ppeIntensity: 0.35,
    dso: 30,
    dio: 60,
    growth: 0.04,
    beta: 0.65,
    idioVol: 0.18,
    dividendProb: 0.95,
  },
  {
    name: "Energy",
    weight: 25,
    industries: ["Oil Gas & Consumable Fuels", "Energy Equipment & Services"],
    words: ["Energy", "Petroleum", "Oil & Gas", "Resources", "Drilling", "Midstream", "Exploration", "Pipeline"],
    suffixes: ["Inc", "Corp", "Co", "Partners"],
    ps: 1.3,
    grossMargin: 0.35,
    sga: 0.06,
    rd: 0,
    capex: 0.15,
    ppeIntensity: 1.4,
    dso: 45,
    dio: 25,
    growth: 0.03,
    beta: 1.2,
    idioVol: 0.32,
    dividendProb: 0.8,
  },
  {
    name: "Utilities",
    weight: 30,
    industries: [
      "Electric Utilities",
      "Multi-Utilities",
      "Gas Utilities",
      "Water Utilities",
      "Independent Power and Renewable Electricity Producers",
    ],
    words: ["Power", "Electric", "Energy", "Utilities", "Gas", "Water", "Light", "Renewables"],
    suffixes: ["Inc", "Corp", "Co", "Company"],
    ps: 2.2,
    grossMargin: 0.45,
    sga: 0.1,
    rd: 0,
    capex: 0.2,
    ppeIntensity: 2.8,
    dso: 40,
    dio: 15,
    growth: 0.03,
    beta: 0.5,
    idioVol: 0.16,
    dividendProb: 1,
  },
  {
    name: "Real Estate",
    weight: 30,
    industries: [
      "Residential REITs",
      "Retail REITs",
      "Office REITs",
      "Industrial REITs",
      "Health Care REITs",
      "Specialized REITs",
      "Real Estate Management & Development",
    ],
    words: ["Realty", "Properties", "Residential", "Real Estate", "Towers", "Storage", "Land", "Office Trust"],
    suffixes: ["Inc", "Trust", "Corp", "REIT Inc"],
    ps: 7,
    grossMargin: 0.65,
    sga: 0.1,
    rd: 0,
    capex: 0.1,
    ppeIntensity: 5,
    dso: 20,
    dio: 0,
    growth: 0.05,
    beta: 0.85,
    idioVol: 0.2,
    dividendProb: 1,
  },
  {
    name: "Materials",
    weight: 28,
    industries: [
      "Chemicals",
      "Metals & Mining",
      "Containers & Packaging",
      "Construction Materials",
      "Paper & Forest Products",
    ],
    words: ["Chemical", "Materials", "Mining", "Steel", "Packaging", "Minerals", "Paper", "Aggregates", "Metals"],
    suffixes: ["Inc", "Corp", "Co", "plc"],
    ps: 1.6,
    grossMargin: 0.3,
    sga: 0.1,
    rd: 0.015,
    capex: 0.07,
    ppeIntensity: 0.9,
    dso: 50,
    dio: 65,
    growth: 0.04,
    beta: 1.1,
    idioVol: 0.26,
    dividendProb: 0.8,
  },
];

const PREFIXES = [
  "North",
  "South",
  "East",
  "West",
  "Blue",
  "Red",
  "Green",
  "Silver",
  "Golden",
  "Iron",
  "Stone",
  "River",
  "Lake",
  "Summit",
  "Pioneer",
  "Liberty",
  "Eagle",
  "Falcon",
  "Harbor",
  "Atlas",
  "Apex",
  "Vertex",
  "Meridian",
  "Crescent",
  "Sterling",
  "Cardinal",
  "Keystone",
  "Granite",
  "Cedar",
  "Oak",
  "Pine",
  "Maple",
  "Willow",
  "Horizon",
  "Frontier",
  "Canyon",
  "Prairie",
  "Coastal",
  "Union",
  "National",
  "Continental",
  "United",
  "Allied",
  "Premier",
  "Pinnacle",
  "Beacon",
  "Lumen",
  "Nova",
  "Orion",
  "Polar",
  "Quantum",
  "Vector",
  "Zenith",
  "Arc",
  "Bright",
  "Clear",
  "Crown",
  "Delta",
  "Echo",
  "Evergreen",
  "Halcyon",
  "Ivory",
  "Jade",
  "Kestrel",
  "Mosaic",
  "Noble",
  "Onyx",
  "Paragon",
  "Radiant",
  "Sable",
  "Tidal",
  "Upland",
  "Valor",
  "Wren",
  "Yarrow",
  "Zephyr",
  "Aurora",
  "Bay",
  "Copper",
  "Dominion",
  "Elm",
  "Fairway",
  "Glacier",
  "Highland",
  "Inland",
  "Juniper",
  "Lodestar",
  "Midland",
  "Northstar",
  "Oakmont",
  "Pacific",
  "Redwood",
  "Saratoga",
  "Trident",
  "Vantage",
  "Windward",
  "Ashford",
  "Birch",
  "Cobalt",
];
const ROOTS = [
  "bridge",
  "field",
  "gate",
  "point",
  "stone",
  "wood",
  "view",
  "crest",
  "land",
  "port",
  "ridge",
  "water",
  "way",
  "well",
  "brook",
  "haven",
];

export interface CompanyDef {
  id: string;
  ticker: string;
  name: string;
  sector: string;
  sectorIndex: number;
  industry: string;
  sharesOutstanding: number;
  /** Price on the first date it trades. */
  startPrice: number;
  /** First and last trading-date index (inclusive). */
  listIndex: number;
  delistIndex: number;
  beta: number;
  sectorLoading: number;
  /** Yearly idiosyncratic volatility. */
  idioVol: number;
  /** Yearly price drift beyond the market (log). */
  alpha: number;
  /** Mean yearly revenue growth (drives alpha a little). */
  growth: number;
  /** Annual revenue at the start, USD. */
  revenue0: number;
  hasStatements: boolean;
  /** Month (1..12) in which the fiscal year ends. */
  fyEndMonth: number;
  paysDividend: boolean;
  buysBack: boolean;
  dailyTurnover: number;
}

function apportion(total: number): number[] {
  const wsum = SECTORS.reduce((s, x) => s + x.weight, 0);
  const raw = SECTORS.map((s) => (s.weight * total) / wsum);
  const counts = raw.map((r) => Math.max(1, Math.floor(r)));
  let left = total - counts.reduce((a, b) => a + b, 0);
  const order = raw.map((r, i) => [r - Math.floor(r), i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  for (let k = 0; left > 0; k = (k + 1) % order.length, left--) counts[order[k][1]]++;
  for (let k = counts.length - 1; left < 0; k = (k - 1 + counts.length) % counts.length)
    if (counts[k] > 1) {
      counts[k]--;
      left++;
    }
  return counts;
}

function makeName(rng: Rng, sector: SectorDef, used: Set<string>): { name: string; core: string[] } {
  for (let attempt = 0; ; attempt++) {
    let first = rng.pick(PREFIXES);
    if (rng.chance(0.35)) first += rng.pick(ROOTS);
    const core = [first];
    if (rng.chance(0.8) || attempt > 5) core.push(rng.pick(sector.words));
    if (attempt > 20) core.push(rng.pick(PREFIXES));
    const name = `${core.join(" ")} ${rng.pick(sector.suffixes)}`;
    if (!used.has(name)) {
      used.add(name);
      return { name, core };
    }
  }
}

function makeTicker(rng: Rng, core: string[], used: Set<string>): string {
  const letters = core
    .join("")
    .toUpperCase()
    .replace(/[^A-Z]/g, "");
  const initials = core.map((w) => w[0].toUpperCase()).join("");
  const consonants = letters[0] + letters.slice(1).replace(/[AEIOU]/g, "");
  const cands: string[] = [];
  if (rng.chance(0.01)) cands.push(letters[0]);
  if (initials.length >= 2 && rng.chance(0.3)) cands.push(initials);
  cands.push(
    letters.slice(0, 3),
    consonants.slice(0, 3),
    letters.slice(0, 4),
    consonants.slice(0, 4),
    letters.slice(0, 2),
  );
  for (let k = 0; k < 6; k++)
    cands.push(
      letters[0] +
        consonants
          .slice(1)
          .split("")
          .filter(() => rng.chance(0.5))
          .join("")
          .slice(0, 3),
    );
  for (const c of cands)
    if (c.length >= 1 && c.length <= 5 && !used.has(c)) {
      used.add(c);
      return c;
    }
  for (;;) {
    const len = rng.int(3, 5);
    let t = letters[0];
    while (t.length < len) t += String.fromCharCode(65 + rng.int(0, 25));
    if (!used.has(t)) {
      used.add(t);
      return t;
    }
  }
}

/** How many listings after the start and delistings before the end a universe of `n` gets. */
export function turnoverCount(n: number): number {
  return Math.max(2, Math.round(n * 0.016));
}

export function buildCompanies(seed: number, count: number, cal: Calendar): CompanyDef[] {
  const rng = Rng.derive(seed, "companies");
  const counts = apportion(count);
  const usedNames = new Set<string>();
  const usedTickers = new Set<string>();
  const nDates = cal.dates.length;
  const out: CompanyDef[] = [];
  SECTORS.forEach((sector, si) => {
    for (let k = 0; k < counts[si]; k++) {
      const { name, core } = makeName(rng, sector, usedNames);
      const ticker = makeTicker(rng, core, usedTickers);
      const startPrice = Math.min(600, Math.max(4, rng.lognormal(Math.log(40), 0.75)));
      const startCap = Math.min(1.5e12, Math.max(1.2e9, rng.lognormal(Math.log(14e9), 1.0)));
      const growth = sector.growth + 0.05 * rng.normal();
      out.push({
        id: "",
        ticker,
        name,
        sector: sector.name,
        sectorIndex: si,
        industry: sector.industries[k % sector.industries.length],
        sharesOutstanding: Math.round(startCap / startPrice / 1000) * 1000,
        startPrice,
        listIndex: 0,
        delistIndex: nDates - 1,
        beta: Math.max(0.3, sector.beta + 0.2 * rng.normal()),
        sectorLoading: rng.uniform(0.6, 1.3),
        idioVol: Math.min(0.6, Math.max(0.1, 0.75 * sector.idioVol * rng.lognormal(0, 0.25))),
        alpha: 0.5 * (growth - sector.growth) + 0.03 * rng.normal(),
        growth,
        revenue0: (startCap / sector.ps) * rng.lognormal(0, 0.35),
        hasStatements: true,
        fyEndMonth: rng.chance(0.78) ? 12 : rng.pick([3, 6, 9, 1, 10]),
        paysDividend: rng.chance(sector.dividendProb),
        buysBack: rng.chance(0.55),
        dailyTurnover: rng.uniform(0.004, 0.013),
      });
    }
  });
  // Stable ids: ticker order gives ids 1..n.
  out.sort((a, b) => (a.ticker < b.ticker ? -1 : a.ticker > b.ticker ? 1 : 0));
  out.forEach((c, i) => {
    c.id = String(i + 1);
  });

  // About 5% without statements; a few listings after the start and delistings before the end.
  const order = rng.shuffle(out.map((_, i) => i));
  const nTurn = turnoverCount(count);
  const year = 252;
  for (const i of order.slice(0, nTurn)) out[i].listIndex = rng.int(40, Math.max(41, nDates - year - 40));
  for (const i of order.slice(nTurn, 2 * nTurn))
    out[i].delistIndex = rng.int(Math.min(nDates - 60, year + 60), nDates - 30);
  const nNoStatements = Math.max(1, Math.round(count * 0.05));
  for (const i of order.slice(2 * nTurn, 2 * nTurn + nNoStatements)) out[i].hasStatements = false;
  return out;
}
