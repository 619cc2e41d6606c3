// The one binary search: every sorted lookup (a trading date on or after a day, a ticker's
// partition, a rating as of a date) is a question of where an ascending run stops being below a
// key. It compares elements directly, with no callback: a shared search calling a different
// closure from each caller is a megamorphic call per step, and it cost metricRows a quarter of its
// time (the trailing windows search each series' days).

/**
 * The first index in [0, to) whose element is not below `key` (`to` when none): the lower bound of
 * `key` in ascending `xs`. With `orEqual`, the first element above `key` (the upper bound), so the
 * last element <= key is `lowerBound(xs, key, true) - 1` (-1 when none).
 */
export function lowerBound<T extends number | string>(
  xs: ArrayLike<T>,
  key: T,
  orEqual = false,
  to: number = xs.length,
): number {
  let lo = 0;
  let hi = to;
  if (orEqual)
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (xs[mid] <= key) lo = mid + 1;
      else hi = mid;
    }
  else
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (xs[mid] < key) lo = mid + 1;
      else hi = mid;
    }
  return lo;
}
