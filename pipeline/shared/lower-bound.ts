// The one binary search: every sorted lookup (a trading date on or after a day, a ticker's
// partition, a rating as of a date) is a question of where a sorted run stops being "before" a key.

/**
 * The first index in [0, length) at which `before` is false, given that it is true on a prefix and
 * false after it (`length` when it is true throughout). Lower bound of `key` in ascending `xs`:
 * `lowerBound(xs.length, (i) => xs[i] < key)`; the last element <= key is
 * `lowerBound(xs.length, (i) => xs[i] <= key) - 1` (-1 when none).
 */
export function lowerBound(length: number, before: (i: number) => boolean): number {
  let lo = 0;
  let hi = length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (before(mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
