// Rolling window statistics in O(n): running sums, re-based every few thousand steps so
// cancellation cannot accumulate (checked against a naive computation in the tests).
const REBASE = 2048;

/** Sample std and mean over each window ending at i ≥ w − 1. */
export function rollingMeanStd(x: Float64Array, w: number): { mean: Float64Array; std: Float64Array } {
  const n = Math.max(0, x.length - w + 1);
  const mean = new Float64Array(n);
  const sd = new Float64Array(n);
  let s = 0, ss = 0;
  for (let i = 0; i < x.length; i++) {
    s += x[i];
    ss += x[i] * x[i];
    if (i >= w) {
      s -= x[i - w];
      ss -= x[i - w] * x[i - w];
    }
    if (i % REBASE === 0 && i >= w) {
      s = 0;
      ss = 0;
      for (let k = i - w + 1; k <= i; k++) (s += x[k]), (ss += x[k] * x[k]);
    }
    if (i >= w - 1) {
      const m = s / w;
      mean[i - w + 1] = m;
      sd[i - w + 1] = Math.sqrt(Math.max(0, (ss - s * m) / (w - 1)));
    }
  }
  return { mean, std: sd };
}

/** Rolling beta cov(x, y) / var(y) over each window ending at i ≥ w − 1. */
export function rollingBeta(x: Float64Array, y: Float64Array, w: number): Float64Array {
  const n = Math.max(0, x.length - w + 1);
  const out = new Float64Array(n);
  let sx = 0, sy = 0, sxy = 0, syy = 0;
  for (let i = 0; i < x.length; i++) {
    sx += x[i];
    sy += y[i];
    sxy += x[i] * y[i];
    syy += y[i] * y[i];
    if (i >= w) {
      const j = i - w;
      sx -= x[j];
      sy -= y[j];
      sxy -= x[j] * y[j];
      syy -= y[j] * y[j];
    }
    if (i % REBASE === 0 && i >= w) {
      sx = sy = sxy = syy = 0;
      for (let k = i - w + 1; k <= i; k++) (sx += x[k]), (sy += y[k]), (sxy += x[k] * y[k]), (syy += y[k] * y[k]);
    }
    if (i >= w - 1) {
      const cov = sxy - (sx * sy) / w;
      const vary = syy - (sy * sy) / w;
      out[i - w + 1] = vary > 0 ? cov / vary : NaN;
    }
  }
  return out;
}
