// Rolling window statistics in O(n) with running sums. Two guards against numerical drift:
// the sums are taken about a shift K (the window's mean at the last re-base) so that squares do not
// cancel catastrophically, and every REBASE steps they are recomputed from the window itself so
// add/remove rounding cannot accumulate (both checked against a naive computation in the tests).
// A window of identical values has exactly zero variance, as pandas' rolling std gives.
const REBASE = 1024;

/** Length of the run of identical values ending at each index. */
function sameRuns(x: Float64Array): Int32Array {
  const run = new Int32Array(x.length);
  for (let i = 0; i < x.length; i++) run[i] = i > 0 && x[i] === x[i - 1] ? run[i - 1] + 1 : 1;
  return run;
}

/** Sample std and mean over each window ending at i ≥ w − 1 (output index i − w + 1). */
export function rollingMeanStd(x: Float64Array, w: number): { mean: Float64Array; std: Float64Array } {
  const n = Math.max(0, x.length - w + 1);
  const mean = new Float64Array(n);
  const sd = new Float64Array(n);
  if (n === 0) return { mean, std: sd };
  const run = sameRuns(x);
  let k = x[0],
    s = 0,
    ss = 0;
  for (let i = 0; i < x.length; i++) {
    if (i >= w && i % REBASE === 0) {
      // Re-base: new shift at the current window's mean, sums recomputed over the window ending at i.
      let t = 0;
      for (let j = i - w + 1; j <= i; j++) t += x[j];
      k = t / w;
      s = ss = 0;
      for (let j = i - w + 1; j <= i; j++) {
        s += x[j] - k;
        ss += (x[j] - k) ** 2;
      }
    } else {
      s += x[i] - k;
      ss += (x[i] - k) ** 2;
      if (i >= w) {
        s -= x[i - w] - k;
        ss -= (x[i - w] - k) ** 2;
      }
    }
    if (i >= w - 1) {
      mean[i - w + 1] = k + s / w;
      sd[i - w + 1] = run[i] >= w ? 0 : Math.sqrt(Math.max(0, (ss - (s * s) / w) / (w - 1)));
    }
  }
  return { mean, std: sd };
}

/** Rolling beta cov(x, y) / var(y) over each window ending at i ≥ w − 1; NaN where y is constant. */
export function rollingBeta(x: Float64Array, y: Float64Array, w: number): Float64Array {
  const n = Math.max(0, x.length - w + 1);
  const out = new Float64Array(n);
  if (n === 0) return out;
  const runY = sameRuns(y);
  let kx = x[0],
    ky = y[0];
  let sx = 0,
    sy = 0,
    sxy = 0,
    syy = 0;
  for (let i = 0; i < x.length; i++) {
    if (i >= w && i % REBASE === 0) {
      let tx = 0,
        ty = 0;
      for (let j = i - w + 1; j <= i; j++) {
        tx += x[j];
        ty += y[j];
      }
      kx = tx / w;
      ky = ty / w;
      sx = sy = sxy = syy = 0;
      for (let j = i - w + 1; j <= i; j++) {
        const dx = x[j] - kx,
          dy = y[j] - ky;
        sx += dx;
        sy += dy;
        sxy += dx * dy;
        syy += dy * dy;
      }
    } else {
      const dx = x[i] - kx,
        dy = y[i] - ky;
      sx += dx;
      sy += dy;
      sxy += dx * dy;
      syy += dy * dy;
      if (i >= w) {
        const ox = x[i - w] - kx,
          oy = y[i - w] - ky;
        sx -= ox;
        sy -= oy;
        sxy -= ox * oy;
        syy -= oy * oy;
      }
    }
    if (i >= w - 1) {
      const cov = sxy - (sx * sy) / w;
      const vary = syy - (sy * sy) / w;
      out[i - w + 1] = runY[i] >= w || !(vary > 0) ? NaN : cov / vary;
    }
  }
  return out;
}
