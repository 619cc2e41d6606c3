// Values of a few ranks of a series as its ascending sort would hold them, without sorting it:
// the metrics read only the extremes and the 1/5/95/99 % quantiles' neighbours, and a full sort
// of every stock's ~6,000 returns was the largest single cost of a metric partition. Two
// selections cut a copy at the 5 % and 95 % ranks; only the two tails (~5 % each) are sorted.
// The values are those of `Float64Array.prototype.sort` (−0 before +0, NaN last) bit for bit.

// The selections work in one scratch array kept between series (a partition's thousands of
// series would otherwise each allocate a copy); only the two sorted tails are kept.
let scratch = new Float64Array(0);
let sample = new Float64Array(0);
let lowBuf = new Float64Array(0);
let highBuf = new Float64Array(0);
/** Sample size for the thresholds, and how far inside the tails they are set (a fraction of the ranks). */
const SAMPLE = 512;
const MARGIN = 0.02;

/** Ranks of `x` in ascending order, each as `sorted(x)[k]` (NaN outside 0..n−1). */
export class OrderStats {
  readonly n: number;
  /** Ranks 0..low, sorted; ranks high..n−1, sorted (when `all` is null). */
  private lowTail = new Float64Array(0);
  private highTail = new Float64Array(0);
  private low = -1;
  private high = Infinity;
  /** The whole sort: short series, NaN, or a rank between the tails asked for. */
  private all: Float64Array | null = null;
  private zeros: { neg: number; negZero: number } | null = null;

  /**
   * `x` must not change while this is used. `lowQ`, `highQ`: the innermost quantiles asked for;
   * ranks between theirs cost a full sort.
   */
  constructor(
    private readonly x: ArrayLike<number>,
    lowQ = 0.05,
    highQ = 0.95,
  ) {
    const n = x.length;
    this.n = n;
    let nan = false;
    for (let i = 0; i < n && !nan; i++) nan = Number.isNaN(x[i]);
    // the ranks quantile() reads for lowQ (its upper neighbour) and highQ
    const low = Math.floor((n - 1) * lowQ) + 1;
    const high = Math.floor((n - 1) * highQ);
    // Short series, or NaN (which `<` cannot order), are sorted whole.
    if (n < 64 || nan || low >= high) {
      this.all = Float64Array.from(x).sort();
      return;
    }
    this.low = low;
    this.high = high;
    if (this.tailsByThresholds(x, low, high)) return;
    if (scratch.length < n) scratch = new Float64Array(Math.max(n, 2 * scratch.length));
    const a = scratch.subarray(0, n);
    a.set(x);
    select(a, high, 0, n - 1);
    select(a, low, 0, high - 1);
    this.lowTail = a.slice(0, low + 1).sort();
    this.highTail = a.slice(high, n).sort();
  }

  /**
   * The tails without selection, whose comparisons a stock's returns mispredict half the time:
   * thresholds from a sorted sample a little inside each tail's rank, then one pass that copies
   * every value at or beyond a threshold (written always, kept by adding a comparison's 0 or 1 to
   * the count: no branch), and the two short copies sorted. False when a tail is not wholly beyond
   * its threshold (an unlucky sample, or many ties): the selections then answer.
   */
  private tailsByThresholds(x: ArrayLike<number>, low: number, high: number): boolean {
    const n = x.length;
    const step = Math.max(1, Math.floor(n / SAMPLE));
    const m = Math.floor((n - 1) / step) + 1;
    if (sample.length < m) sample = new Float64Array(m);
    const smp = sample.subarray(0, m);
    for (let i = 0, j = 0; j < m; i += step, j++) smp[j] = x[i];
    smp.sort();
    // about 2 % of the sample beyond each tail's own share (a sample rank, then two more)
    const lo = smp[Math.min(m - 1, Math.ceil(((low + 1) / n + MARGIN) * m) + 2)];
    const hi = smp[Math.max(0, Math.floor(((high - 1) / n - MARGIN) * m) - 2)];
    if (lowBuf.length < n + 1) {
      lowBuf = new Float64Array(n + 1);
      highBuf = new Float64Array(n + 1);
    }
    const lows = lowBuf,
      highs = highBuf; // locals: the loop reads no module binding
    let kLow = 0,
      kHigh = 0;
    for (let i = 0; i < n; i++) {
      const v = x[i];
      lows[kLow] = v;
      kLow += +(v <= lo);
      highs[kHigh] = v;
      kHigh += +(v >= hi);
    }
    if (kLow < low + 1 || kHigh < n - high) return false;
    this.lowTail = lows
      .subarray(0, kLow)
      .sort()
      .slice(0, low + 1);
    this.highTail = highs
      .subarray(0, kHigh)
      .sort()
      .slice(kHigh - (n - high));
    return true;
  }

  /** `sorted(x)[k]`. */
  at(k: number): number {
    if (!(k >= 0 && k < this.n)) return NaN;
    if (this.all) return this.all[k];
    let v: number;
    if (k <= this.low) v = this.lowTail[k];
    else if (k >= this.high) v = this.highTail[k - this.high];
    else {
      // A rank between the tails: nothing asks for one today, but it is still answered exactly.
      this.all = Float64Array.from(this.x).sort();
      return this.all[k];
    }
    return v === 0 ? this.zeroAt(k) : v;
  }

  /**
   * A zero's sign at rank k: the selections compare with `<`, for which −0 equals +0, so a tail
   * may hold a zero of the other sign than the sort puts there. The sort puts the −0s first.
   */
  private zeroAt(k: number): number {
    if (!this.zeros) {
      let neg = 0,
        negZero = 0;
      for (let i = 0; i < this.n; i++) {
        const v = this.x[i];
        if (v < 0) neg++;
        else if (v === 0 && Object.is(v, -0)) negZero++;
      }
      this.zeros = { neg, negZero };
    }
    return k - this.zeros.neg < this.zeros.negZero ? -0 : 0;
  }

  /** Linear-interpolated quantile, as `quantileSorted(sorted(x), q)` (pandas/numpy default). */
  quantile(q: number): number {
    const n = this.n;
    if (n === 0) return NaN;
    const h = (n - 1) * q;
    const lo = Math.floor(h);
    const hi = Math.min(lo + 1, n - 1);
    const a = this.at(lo);
    return a + (h - lo) * (this.at(hi) - a);
  }
}

/**
 * Hoare selection (Wirth's): afterwards a[k] holds the value of rank k within a[l..r], with no
 * greater value before it and no smaller one after it. No NaN in a[l..r].
 */
function select(a: Float64Array, k: number, l: number, r: number): void {
  while (l < r) {
    // median of three as the pivot: sorted or reversed runs cost linear time too
    const x = median3(a[l], a[k], a[r]);
    let i = l,
      j = r;
    do {
      while (a[i] < x) i++;
      while (x < a[j]) j--;
      if (i <= j) {
        const t = a[i];
        a[i] = a[j];
        a[j] = t;
        i++;
        j--;
      }
    } while (i <= j);
    if (j < k) l = i;
    if (k < i) r = j;
  }
}

const median3 = (p: number, q: number, s: number) =>
  p < q ? (q < s ? q : Math.max(p, s)) : p < s ? p : Math.max(q, s);
