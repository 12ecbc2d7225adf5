/* Plots fit for a talk (issue 49): a probe plot drawn 1920 pixels wide, as
 * on a projector, has text that grows with it (the title's capitals at
 * least 20 pixels tall, against 14 at the 900-pixel default, which stays as
 * it was) and keeps its axes and legend.  Decoded with libpng.  The images
 * stay in <build>/test_plot_talk_out/. */
#include <png.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "io/plot.h"

static uint8_t *read_png(const char *path, int *w, int *h)
{
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&img, path)) return NULL;
    img.format = PNG_FORMAT_RGB;
    uint8_t *px = malloc(PNG_IMAGE_SIZE(img));
    if (!px || !png_image_finish_read(&img, NULL, px, 0, NULL)) {
        free(px);
        png_image_free(&img);
        return NULL;
    }
    *w = (int)img.width;
    *h = (int)img.height;
    return px;
}

/* Rows of the title's ink: dark pixels in the middle third of the width
 * above row `below` (the y tick labels are at the left, the legend inside
 * the frame). */
static int title_rows(const uint8_t *px, int w, int below)
{
    int first = -1, last = -1;
    for (int y = 0; y < below; y++)
        for (int x = w / 3; x < 2 * w / 3; x++) {
            const uint8_t *q = px + ((size_t)y * (size_t)w + (size_t)x) * 3;
            if (q[0] < 60 && q[1] < 60 && q[2] < 60) {
                if (first < 0) first = y;
                last = y;
                break;
            }
        }
    return first < 0 ? 0 : last - first + 1;
}

/* Distinct colours of the series in the palette's blue and orange. */
static int has_colour(const uint8_t *px, int w, int h, uint8_t r, uint8_t g, uint8_t b)
{
    for (size_t i = 0; i < (size_t)w * (size_t)h; i++)
        if (px[3 * i] == r && px[3 * i + 1] == g && px[3 * i + 2] == b) return 1;
    return 0;
}

int main(void)
{
    char dir[1024], path[1200];
    snprintf(dir, sizeof dir, "%s/test_plot_talk_out", PYR_BINARY_DIR);
    mkdir(dir, 0777);
    double t[200], e1[200], e2[200];
    for (int i = 0; i < 200; i++) {
        t[i] = i * 0.05;
        e1[i] = (i % 40) / 40.0 - 0.5;
        e2[i] = ((i + 20) % 40) / 40.0 - 0.5;
    }
    const pyr_plot_series_t s[2] = {{"probe 0 (Ez at 1, 2)", t, e1, 200, 0}, {"probe 1 (Ez at 3, 2)", t, e2, 200, 0}};
    const struct {
        int w, h, min_rows, max_rows;
    } cases[2] = {{1920, 1080, 20, 24}, {0, 0, 14, 14}}; /* 0: the 900 x 600 default */
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/probes_%d.png", dir, cases[k].w);
        const pyr_plot_opts_t o = {.title = "PROBES E HEIGHT", .xlabel = "time t", .ylabel = "E", .width = cases[k].w,
                                   .height = cases[k].h};
        CHECK(pyr_plot_write_png(path, s, 2, &o) == PYR_OK, "plot %s", path);
        int w = 0, h = 0;
        uint8_t *px = read_png(path, &w, &h);
        CHECK(px != NULL, "read %s back", path);
        if (!px) continue;
        const int want_w = cases[k].w ? cases[k].w : 900, want_h = cases[k].h ? cases[k].h : 600;
        CHECK(w == want_w && h == want_h, "%s: %d x %d, want %d x %d", path, w, h, want_w, want_h);
        const int rows = title_rows(px, w, 50);
        CHECK(rows >= cases[k].min_rows && rows <= cases[k].max_rows, "%s: the title's capitals are %d pixels tall, want %d..%d",
              path, rows, cases[k].min_rows, cases[k].max_rows);
        CHECK(has_colour(px, w, h, 31, 100, 190) && has_colour(px, w, h, 230, 120, 20), "%s: both series drawn", path);
        free(px);
    }
    return check_report();
}
