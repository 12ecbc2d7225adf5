/* The .npy frame stacks of `pyrgrid frames` (frames_io.c's own parser, not
 * io/npy.c): the header (version, length, descr, fortran_order, shape),
 * dtypes, the promised size against the file's, and reading frames.  Every
 * input must open or fail with a message; never a crash, a leak or a read
 * out of bounds. */
#include "fuzz_util.h"
#include "core/error.h"
#include "pipelines/frames/frames_io.h"

#include <limits.h>

static char link_dir[64], link_path[96];

static void remove_link(void)
{
    unlink(link_path);
    rmdir(link_dir);
}

/* The stack reader is chosen by the name's ending, which a memfd's path
 * lacks: a private directory holds "in.npy", a link to it. */
static const char *npy_name(const uint8_t *data, size_t size)
{
    const char *target = fuzz_file(data, size);
    if (!link_dir[0]) {
        snprintf(link_dir, sizeof link_dir, "/tmp/pyrgrid-fuzz-npy.XXXXXX");
        if (!mkdtemp(link_dir)) abort();
        snprintf(link_path, sizeof link_path, "%s/in.npy", link_dir);
        if (symlink(target, link_path) != 0) abort();
        atexit(remove_link);
    }
    return link_path;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = npy_name(data, size);
    fr_source_t *src = NULL;
    fr_source_info_t info;
    pyr_clear_error();
    if (fr_source_open(&path, 1, &src, &info) != PYR_OK) {
        if (src) abort();                  /* documented: NULL on failure */
        if (!pyr_last_error()[0]) abort(); /* a failure says why */
        return 0;
    }
    if (info.nx < 1 || info.ny < 1 || info.nframes < 1 || info.fits) abort();
    /* the size check: every frame the header promises is in the file */
    if ((double)info.nx * (double)info.ny * (double)info.nframes * 2 > (double)size) abort();
    void *buf = malloc((size_t)(info.nx * info.ny) * fr_dtype_size(info.type));
    if (!buf) abort();
    if (fr_source_read(src, 0, buf) != PYR_OK) abort();
    if (fr_source_read(src, info.nframes - 1, buf) != PYR_OK) abort();
    if (fr_source_read(src, info.nframes, buf) == PYR_OK) abort(); /* one past the end */
    char date[25];
    double exptime;
    fr_source_frame_keys(src, 0, date, &exptime);
    free(buf);
    fr_source_close(&src);
    return 0;
}
