// Seeded pseudo-random numbers: xoshiro128** seeded through splitmix32. No Math.random anywhere,
// so one seed always gives the same sample. Each concern draws from its own stream (`Rng.derive`),
// so adding draws in one module does not shift the numbers of another.

function splitmix32(state: { s: number }): number {
  state.s = (state.s + 0x9e3779b9) | 0;
  let z = state.s;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

/** FNV-1a hash of a label, mixed with a numeric seed: the seed of a derived stream. */
export function hashSeed(seed: number, label: string): number {
  let h = 0x811c9dc5 ^ (seed >>> 0);
  for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193);
  h = Math.imul(h ^ (seed >>> 16), 0x01000193);
  return h >>> 0;
}

export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  private spare: number | null = null;

  constructor(seed: number) {
    const st = { s: seed | 0 };
    this.a = splitmix32(st);
    this.b = splitmix32(st);
    this.c = splitmix32(st);
    this.d = splitmix32(st);
    if ((this.a | this.b | this.c | this.d) === 0) this.a = 1;
  }

  /** A fresh independent stream named by `label`. */
  static derive(seed: number, label: string): Rng {
    return new Rng(hashSeed(seed, label));
  }

  /** Uniform 32-bit unsigned integer (xoshiro128**). */
  nextU32(): number {
    const result = Math.imul(rotl(Math.imul(this.b, 5), 7), 9) >>> 0;
    const t = this.b << 9;
    this.c ^= this.a;
    this.d ^= this.b;
    this.b ^= this.c;
    this.a ^= this.d;
    this.c ^= t;
    this.d = rotl(this.d, 11);
    return result;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextU32() / 4294967296;
  }

  /** Uniform in (0, 1): safe for logarithms. */
  open01(): number {
    return (this.nextU32() + 0.5) / 4294967296;
  }

  uniform(lo: number, hi: number): number {
    return lo + (hi - lo) * this.next();
  }

  /** Integer in [lo, hi] inclusive. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }

  /** Standard normal (Box-Muller, the second value kept for the next call). */
  normal(): number {
    if (this.spare !== null) {
      const s = this.spare;
      this.spare = null;
      return s;
    }
    const r = Math.sqrt(-2 * Math.log(this.open01()));
    const th = 2 * Math.PI * this.next();
    this.spare = r * Math.sin(th);
    return r * Math.cos(th);
  }

  /** exp(mu + sigma * N(0,1)). */
  lognormal(mu: number, sigma: number): number {
    return Math.exp(mu + sigma * this.normal());
  }

  /**
   * Student-t with 6 degrees of freedom scaled to unit variance: a normal over the root of a
   * chi-square(6)/6, the chi-square drawn exactly as -2 ln(U1 U2 U3). Fat tails, finite variance.
   */
  fatTail(): number {
    const chi2 = -2 * Math.log(this.open01() * this.open01() * this.open01());
    return (this.normal() / Math.sqrt(chi2 / 6)) * STUDENT6_SCALE;
  }

  /** Fisher-Yates shuffle of a copy. */
  shuffle<T>(items: readonly T[]): T[] {
    const out = items.slice();
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [out[i], out[j]] = [out[j], out[i]];
    }
    return out;
  }
}

/** Var(t_6) = 6/4, so this scale gives unit variance. */
const STUDENT6_SCALE = Math.sqrt(4 / 6);

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}
