/* Frames on the GPU: how the pipeline sizes its work.  The dot products'
 * kernel keeps the occupancy of its own registers: the weights solve, which
 * needs far more, has a launch of its own (with the solve in the dot
 * products' last block, every block of the dot products ran at a quarter
 * of the occupancy: the weights stage slower at 512^2, the 4096^2 stream
 * slower).  Frames up to 1024^2 go in batches; larger ones one at a time,
 * where a batch only adds its costs (the 4096^2 stream ran slower in
 * batches of 2).  Exits 77 without a GPU. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "pyrgrid.h"
#include "pyrgrid_frames.h"
#include "pipelines/frames/frames_internal.h"

static pyr_status_t counter(void *user, const pyr_frames_result_t *r)
{
    (void)user;
    (void)r;
    return PYR_OK;
}

/* The device text of a pipeline of nx x ny frames on the GPU. */
static void device_text(int64_t nx, int64_t ny, char *text, size_t size)
{
    pyr_frames_options_t o;
    pyr_frames_options_default(&o);
    o.backend = PYR_BACKEND_CUDA;
    o.history = 4;
    pyr_frames_t *f = NULL;
    CHECK_OK(pyr_frames_create(nx, ny, &o, counter, NULL, &f));
    pyr_frames_stats_t st;
    pyr_frames_get_stats(f, &st);
    snprintf(text, size, "%s", st.device);
    pyr_frames_destroy(&f);
}

int main(void)
{
    if (pyr_gpu_count() == 0) {
        printf("no usable GPU: skipped\n");
        return 77;
    }
    int threads = fr_cuda_dots_occupancy();
    printf("dot products' kernel: %d threads per multiprocessor\n", threads);
    CHECK(threads >= 1024, "the dot products' kernel holds %d threads per multiprocessor; it should hold at least 1024 (its "
                           "registers limit it: keep larger code such as the weights solve out of it)",
          threads);
    char text[256];
    device_text(1024, 1024, text, sizeof text);
    printf("1024 x 1024: %s\n", text);
    CHECK(strstr(text, "shifts in batches of") != NULL, "frames of 1024 x 1024 should go in batches: %s", text);
    device_text(1032, 1024, text, sizeof text);
    printf("1032 x 1024: %s\n", text);
    CHECK(strstr(text, "batches") == NULL, "frames above 1024^2 should go one at a time: %s", text);
    return check_report();
}
