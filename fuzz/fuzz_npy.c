/* The .npy reader: header parsing, shapes, dtypes, truncated data.  Every
 * input must give PYR_OK or an error with a message; never a crash, a leak
 * or a read out of bounds. */
#include "fuzz_util.h"
#include "io/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    pyr_npy_info_t info;
    if (pyr_npy_read_info(path, &info) == PYR_OK) {
        if (info.count < 0 || info.ndim < 0 || info.ndim > PYR_NPY_MAX_NDIM) abort();
    }
    void *all = NULL;
    if (pyr_npy_read_alloc(path, &info, &all) == PYR_OK) {
        size_t elem = pyr_precision_size(info.precision);
        if ((size_t)info.count * elem > size) abort(); /* more data than the file holds */
        free(all);
    } else if (all) {
        abort(); /* documented: NULL on failure */
    }
    static const int64_t s2[2] = {2, 3}, s1[1] = {5};
    double d[6];
    float f[5];
    (void)pyr_npy_read_expect(path, 2, s2, PYR_DOUBLE, d);
    (void)pyr_npy_read_expect(path, 1, s1, PYR_FLOAT, f);
    return 0;
}
