/* The FITS input of `pyrgrid frames` (src/io/fits.c through frames_io.c):
 * the probe (FITS, gzip, other compressions), the choice of the image HDU
 * with the pre-check of each header cfitsio would otherwise crash on, the
 * header's sizes against the file's, the kept cards and their values, and
 * reading frames.  The seeds crash_* are headers that crashed cfitsio.  Every input must open or
 * fail with a message; never a crash, a leak, a read out of bounds or an
 * allocation the file's size does not justify.
 *
 * The tiles of a tile-compressed image are opened and sized here but not
 * decoded: cfitsio's own decoders (RICE_1, HCOMPRESS_1, PLIO_1) trust the
 * compressed bytes and read past their buffers on forged ones (Debian's
 * 4.2.0, and upstream's RICE decoder still), which is cfitsio's to fix,
 * not something this harness can judge pyrgrid by. */
#include "fuzz_util.h"
#include "core/error.h"
#include "io/fits.h"
#include "pipelines/frames/frames_io.h"

/* cfitsio sizes some of its tables by header values, so a forged header
 * can ask for petabytes; malloc refuses that and cfitsio reports an error,
 * as in the program.  The sanitizer lets such a refusal through rather than
 * stopping at it. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    pyr_fits_reader_t *r = NULL;
    pyr_fits_info_t info;
    pyr_clear_error();
    if (pyr_fits_open(path, &r, &info) == PYR_OK) {
        if (info.nx < 1 || info.ny < 1 || info.nframes < 1 || info.ncards < 0) abort();
        for (int c = 0; c < info.ncards; c++)
            if (memchr(info.cards[c], 0, 81) == NULL) abort(); /* every kept card is a string */
        char v[80];
        (void)pyr_fits_card_value(&info, "DATE-OBS", v, sizeof v);
        (void)pyr_fits_card_value(&info, "EXPTIME", v, sizeof v);
        /* frames of a size the file can hold */
        if (!info.tile_compressed && info.nx * info.ny <= (1 << 16)) {
            float *f = malloc((size_t)(info.nx * info.ny) * sizeof *f);
            if (!f) abort();
            (void)pyr_fits_read_frame(r, 0, PYR_FITS_F32, f);
            (void)pyr_fits_read_frame(r, info.nframes - 1, info.native, f);
            free(f);
        }
        pyr_fits_close(&r);
    } else if (r) {
        abort(); /* documented: NULL on failure */
    } else if (!pyr_last_error()[0]) {
        abort(); /* a failure says why */
    }
    /* the same file as a frame sequence: one cube, or a list of two images */
    const char *one[2] = {path, path};
    for (int n = 1; n <= 2; n++) {
        fr_source_t *src = NULL;
        fr_source_info_t si;
        if (fr_source_open(one, n, &src, &si) != PYR_OK) continue;
        if (!si.fits->tile_compressed && si.nx * si.ny <= (1 << 16) && si.nframes <= 64) {
            void *buf = malloc((size_t)(si.nx * si.ny) * fr_dtype_size(si.type));
            if (!buf) abort();
            for (int64_t i = 0; i < si.nframes; i++) {
                char date[25];
                double exptime;
                (void)fr_source_read(src, i, buf);
                fr_source_frame_keys(src, i, date, &exptime);
                if (memchr(date, 0, sizeof date) == NULL) abort();
            }
            free(buf);
        }
        fr_source_close(&src);
    }
    return 0;
}
