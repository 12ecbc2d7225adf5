/* pyr_host_copy_rows: see host_copy.h. */
#include "backend/host_copy.h"

#include <omp.h>
#include <string.h>

/* bytes [lo, hi) of the rows laid end to end */
static void copy_range(char *dst, size_t dp, const char *src, size_t sp, size_t bytes, size_t lo, size_t hi)
{
    while (lo < hi) {
        const size_t r = lo / bytes, off = lo % bytes, n = bytes - off < hi - lo ? bytes - off : hi - lo;
        memcpy(dst + r * dp + off, src + r * sp + off, n);
        lo += n;
    }
}

void pyr_host_copy_rows(void *dst, size_t dp, const void *src, size_t sp, size_t bytes, int64_t rows, int threads)
{
    if (bytes == 0 || rows <= 0) return;
    const size_t total = bytes * (size_t)rows, slice = (size_t)1 << 20; /* below this a thread's start costs more than it saves */
    int t = threads > 0 ? threads : omp_get_max_threads();
    if (t > 8) t = 8;
    if ((size_t)t > total / slice) t = (int)(total / slice);
    if (t <= 1 || omp_in_parallel()) {
        copy_range((char *)dst, dp, (const char *)src, sp, bytes, 0, total);
        return;
    }
#pragma omp parallel num_threads(t)
    {
        const size_t k = (size_t)omp_get_thread_num(), n = (size_t)omp_get_num_threads();
        /* whole cache lines per thread where the rows allow */
        size_t lo = total / n * k, hi = k + 1 == n ? total : total / n * (k + 1);
        lo &= ~(size_t)63;
        if (k + 1 < n) hi &= ~(size_t)63;
        copy_range((char *)dst, dp, (const char *)src, sp, bytes, lo, hi);
    }
}
