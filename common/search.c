/* The one binary search (search.h). */
#include "search.h"

size_t
wt_lower_bound (size_t lo, size_t hi, uint64_t key, wt_key_fn key_of, const void *ctx)
{
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (key_of (mid, ctx) < key)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}
