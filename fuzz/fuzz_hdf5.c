/* HDF5 field files (io/hdf5.h).  Two parts, chosen by the first byte:
 *
 *  - odd: the bytes are a file handed to pyrgrid's reader (libhdf5 itself
 *    parses it).  This part runs only with PYR_FUZZ_HDF5_LIBRARY=1: libhdf5
 *    is not built with coverage, so the fuzzer is blind inside it, and
 *    Debian's 1.10.8 fails within seconds on crafted files (a 64-byte file
 *    makes it allocate 2 GB; leaks), which pyrgrid cannot fix, so the smoke
 *    run would always fail.  It stays as a hunt (fuzz/run.sh);
 *  - even: the bytes describe what a reader found (ranks, extents, types,
 *    attributes present, of which kind, with which values, how the dataset
 *    was reached and how it stores its values) and pyrgrid's own judgement,
 *    pyr_h5_check, must accept or refuse it with a message, never crash or
 *    read out of bounds, and agree with itself: a field of 1 to 3 axes of
 *    float32/float64 whenever it accepts; never a dataset reached through a
 *    link that leaves the file, dangles or loops, kept in external raw
 *    storage or mapped from others (virtual), or behind a filter that is
 *    missing (those are refused, never followed); a snapshot's step is the
 *    one its name says; "missing" only for a name that is not there.
 *    Inputs of the older layout (without the trailing bytes) mean what they
 *    meant: nothing hostile.
 */
#include "fuzz_util.h"
#include "io/hdf5.h"

static uint64_t take(const uint8_t **p, const uint8_t *end, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++) v = v << 8 | (*p < end ? *(*p)++ : 0);
    return v;
}

static void take_text(const uint8_t **p, const uint8_t *end, char *out, size_t size)
{
    size_t n = (size_t)take(p, end, 1) % size;
    size_t i = 0;
    for (; i < n && *p < end; i++) out[i] = (char)*(*p)++;
    out[i] = 0;
}

static void check_layer(const uint8_t *data, size_t size)
{
    const uint8_t *p = data, *end = data + size;
    pyr_h5_found_t f;
    memset(&f, 0, sizeof f);
    uint64_t flags = take(&p, end, 4);
    f.has_dataset = flags & 1;
    f.is_dataset = (flags >> 1) & 1;
    f.has_format = (flags >> 2) & 1;
    f.format_ok = (flags >> 3) & 1;
    f.has_version = (flags >> 4) & 1;
    f.version_ok = (flags >> 5) & 1;
    f.has_equation = (flags >> 6) & 1;
    f.equation_ok = (flags >> 7) & 1;
    f.has_step = (flags >> 8) & 1;
    f.step_ok = (flags >> 9) & 1;
    f.has_t = (flags >> 10) & 1;
    f.t_ok = (flags >> 11) & 1;
    f.has_n = (flags >> 12) & 1;
    f.n_ok = (flags >> 13) & 1;
    f.has_dims_attr = (flags >> 14) & 1;
    f.dims_attr_ok = (flags >> 15) & 1;
    f.type_class = (int)(take(&p, end, 1) % 5);
    f.type_size = (size_t)take(&p, end, 1);
    f.rank = (int)(int8_t)take(&p, end, 1);
    for (int i = 0; i < PYR_H5_MAX_RANK; i++) f.dims[i] = take(&p, end, (int)(take(&p, end, 1) % 9));
    take_text(&p, end, f.format, sizeof f.format);
    if (take(&p, end, 1) & 1) snprintf(f.format, sizeof f.format, "%s", PYR_H5_FORMAT);
    take_text(&p, end, f.equation, sizeof f.equation);
    f.version = (int64_t)take(&p, end, 8);
    f.step = (int64_t)take(&p, end, 8);
    uint64_t tb = take(&p, end, 8);
    memcpy(&f.t, &tb, sizeof f.t);
    for (int a = 0; a < 3; a++) f.n[a] = (int64_t)take(&p, end, (int)(take(&p, end, 1) % 9));
    f.dims_attr = (int64_t)take(&p, end, 1);
    /* how the dataset was reached and stores its values (bits 16.. of flags, and trailing bytes) */
    f.link = (int)((flags >> 16) & 7) % 6; /* 5: a kind no reader reports */
    f.external_storage = (flags >> 19) & 1 ? (int)(int8_t)take(&p, end, 1) : 0;
    f.virtual_layout = (flags >> 20) & 1;
    f.missing_filter = (flags >> 21) & 1 ? (int)(int32_t)take(&p, end, 4) : 0;
    take_text(&p, end, f.link_name, sizeof f.link_name);
    take_text(&p, end, f.link_target, sizeof f.link_target);
    take_text(&p, end, f.external_file, sizeof f.external_file);
    take_text(&p, end, f.filter_name, sizeof f.filter_name);
    char dataset[128] = "u";
    if ((flags >> 22) & 1) take_text(&p, end, dataset, sizeof dataset);
    if ((flags >> 23) & 1) /* a snapshot's name: its step the attribute's, or one off */
        snprintf(dataset, sizeof dataset, "%ssnapshots/%06u/u", (flags >> 24) & 1 ? "/" : "",
                 (unsigned)((f.step & 0xfffff) ^ (int64_t)((flags >> 25) & 1)));
    const int hostile = f.link != PYR_H5_LINK_OK || f.external_storage != 0 || f.virtual_layout || f.missing_filter != 0;
    pyr_h5_info_t info;
    if (pyr_h5_check("fuzz.h5", dataset, &f, &info) == PYR_OK) {
        if (hostile) abort();
        if (info.missing) abort();
        if (info.ndim < 1 || info.ndim > 3) abort();
        if (info.precision != PYR_FLOAT && info.precision != PYR_DOUBLE) abort();
        for (int i = 0; i < info.ndim; i++)
            if (info.shape[i] < 1) abort();
        /* a snapshot's step is its name's */
        const char *s = dataset[0] == '/' ? dataset + 1 : dataset;
        if (info.has_step && !strncmp(s, "snapshots/", 10)) {
            char *e = NULL;
            const long long named = strtoll(s + 10, &e, 10);
            if (e && e > s + 10 && e - (s + 10) < 18 && *e == '/' && s[10] >= '0' && s[10] <= '9' && named != info.step) abort();
        }
    } else {
        if (!pyr_last_error()[0]) abort();
        if (info.missing && (f.has_dataset || f.link != PYR_H5_LINK_OK)) abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) return 0;
    if (!(data[0] & 1)) {
        check_layer(data + 1, size - 1);
        return 0;
    }
    static int library = -1;
    if (library < 0) {
        const char *e = getenv("PYR_FUZZ_HDF5_LIBRARY");
        library = e && *e == '1';
    }
    if (!library || !pyr_h5_available()) return 0;
    const char *path = fuzz_file(data + 1, size - 1);
    pyr_h5_info_t info;
    if (pyr_h5_read_info(path, NULL, &info) == PYR_OK && info.ndim >= 1 && info.ndim <= 3) {
        int64_t count = 1;
        for (int i = 0; i < info.ndim; i++) count *= info.shape[i];
        if (count > 0 && count <= (1 << 16)) {
            double *buf = malloc((size_t)count * sizeof *buf);
            if (buf) (void)pyr_h5_read_expect(path, NULL, info.ndim, info.shape, info.precision, buf);
            free(buf);
        }
    }
    return 0;
}
