/* The one binary search of wtrack: the first element of a sorted range
 * whose key is not below a given key (C++'s std::lower_bound). Each
 * sorted array says how to read an element's key through key_of; the
 * range is given by index, so an array read through another (a manifest's
 * files by id) and a part of an array are searched alike. */
#ifndef WT_SEARCH_H
#define WT_SEARCH_H

#include <stddef.h>
#include <stdint.h>

/* The key of element i of the array ctx describes. */
typedef uint64_t (*wt_key_fn) (size_t i, const void *ctx);

/* The first i in [lo, hi) whose key_of (i, ctx) >= key; hi when there is
 * none (lo when the range is empty). key_of must not decrease with i. */
size_t wt_lower_bound (size_t lo, size_t hi, uint64_t key, wt_key_fn key_of,
                       const void *ctx);

#endif
