/* The frames pipeline's files on the public API (pyrgrid_frames_io.h), as
 * a C program outside the library has them: a configuration by its keys, a
 * .npy and a FITS cube written and read back frame by frame through a
 * source, an image, the candidates' table, and the struct sizes a binding
 * checks.  Built like the other tests of tests/api/: include/ headers only,
 * linked against the shared libpyrgrid. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "pyrgrid_frames.h"
#include "pyrgrid_frames_io.h"
#include "pyrgrid_output.h"

enum { NX = 48, NY = 40, NF = 3 };
static char dir[1024];

static const char *tpath(const char *name)
{
    static char buf[8][1200];
    static int k = 0;
    char *b = buf[k++ % 8];
    snprintf(b, 1200, "%s/%s", dir, name);
    return b;
}

static void frame_values(int f, float *v)
{
    for (int i = 0; i < NX * NY; i++) v[i] = (float)(100 * f + i % 97);
}

static void test_config(void)
{
    pyr_frames_config_t *c = NULL;
    CHECK_OK(pyr_frames_config_create(&c));
    CHECK(pyr_frames_config_options(c)->history == 20, "default history %d", pyr_frames_config_options(c)->history);
    CHECK_OK(pyr_frames_config_set(c, "frames.history=7"));
    CHECK_OK(pyr_frames_config_set(c, "residual=out.npy"));
    CHECK(pyr_frames_config_options(c)->history == 7, "history %d", pyr_frames_config_options(c)->history);
    CHECK(!strcmp(pyr_frames_config_text(c, "residual"), "out.npy"), "residual %s", pyr_frames_config_text(c, "residual"));
    CHECK(!strcmp(pyr_frames_config_text(c, "frames.residual"), "out.npy"), "frames.residual");
    CHECK(pyr_frames_config_text(c, "history") == NULL, "history is no file key");
    CHECK(pyr_frames_config_text(c, "mask_bits") != NULL, "mask_bits");
    CHECK_FAILS(pyr_frames_config_set(c, "frames.weights=banana"), PYR_ERR_CONFIG, "weights");
    FILE *f = fopen(tpath("c.ini"), "wb");
    CHECK(f != NULL, "cannot write c.ini");
    if (f) {
        fputs("[frames]\nthreshold = 4\ncandidates = cands.ecsv\n", f);
        fclose(f);
    }
    CHECK_OK(pyr_frames_config_load(c, tpath("c.ini")));
    CHECK(pyr_frames_config_options(c)->threshold == 4, "threshold %g", pyr_frames_config_options(c)->threshold);
    CHECK(!strcmp(pyr_frames_config_text(c, "candidates"), "cands.ecsv"), "candidates");
    pyr_frames_config_destroy(&c);
    CHECK(c == NULL, "destroy clears");
}

/* A cube written at `name` and read back through a source. */
static void cube_roundtrip(const char *name, int check_order)
{
    float v[NX * NY], back[NX * NY];
    pyr_frames_cube_t *cube = NULL;
    const char *hist[1] = {"test_api_frames_io"};
    CHECK_OK(pyr_frames_cube_check_output(tpath(name)));
    CHECK_OK(pyr_frames_cube_open(tpath(name), NX, NY, NF, NULL, hist, 1, &cube));
    if (!cube) return;
    if (check_order) {
        frame_values(1, v);
        CHECK_FAILS(pyr_frames_cube_write(cube, 1, v), PYR_ERR_ARG, "in order");
    }
    for (int t = 0; t < NF; t++) {
        frame_values(t, v);
        CHECK_OK(pyr_frames_cube_write(cube, t, v));
    }
    float dx[NF] = {0, 0.5f, 1}, dy[NF] = {0, -0.5f, -1};
    int it[NF] = {0, 3, 4};
    CHECK_OK(pyr_frames_cube_shifts(cube, NF, dx, dy, it, NULL));
    struct stat sb;
    CHECK(stat(tpath(name), &sb) != 0, "%s exists before the commit", name);
    CHECK_OK(pyr_frames_cube_commit(&cube));
    CHECK(cube == NULL, "commit clears");

    pyr_frames_source_t *src = NULL;
    const char *paths[1] = {tpath(name)};
    CHECK_OK(pyr_frames_source_open(paths, 1, &src));
    if (!src) return;
    pyr_frames_source_info_t info;
    pyr_frames_source_get_info(src, &info);
    CHECK(info.nx == NX && info.ny == NY && info.nframes == NF, "%s: %lld x %lld x %lld", name, (long long)info.nx, (long long)info.ny,
          (long long)info.nframes);
    CHECK(info.type == PYR_FRAMES_F32 && pyr_frames_dtype_size(info.type) == 4, "%s: type %d", name, (int)info.type);
    CHECK(!info.has_mask && !info.has_variance, "%s: no planes", name);
    CHECK(info.kind && info.notice, "%s: kind and notice set", name);
    for (int t = 0; t < NF; t++) {
        frame_values(t, v);
        CHECK_OK(pyr_frames_source_read(src, t, back));
        CHECK(!memcmp(v, back, sizeof v), "%s: frame %d differs", name, t);
    }
    CHECK_FAILS(pyr_frames_source_read(src, NF, back), PYR_ERR_ARG, "range");
    double mjd = 0;
    CHECK_OK(pyr_frames_source_frame_mjd(src, 0, &mjd));
    CHECK(isnan(mjd), "%s: no time in the header: mjd %g", name, mjd);
    pyr_frames_wcs_t *wcs = (pyr_frames_wcs_t *)1;
    CHECK_OK(pyr_frames_source_frame_wcs(src, 0, &wcs));
    CHECK(wcs == NULL, "%s: no WCS", name);
    char where[2048];
    pyr_frames_source_frame_name(src, 0, where, sizeof where);
    CHECK(strstr(where, name) != NULL, "frame name %s", where);
    pyr_frames_source_close(&src);
    CHECK(src == NULL, "close clears");
}

static void test_cubes_and_images(void)
{
    cube_roundtrip("r.npy", 1);
    cube_roundtrip("r.fits", 0);
    float v[NX * NY];
    frame_values(2, v);
    CHECK_OK(pyr_frames_image_write(tpath("m.npy"), NX, NY, v, NULL, NULL, 0));
    CHECK_OK(pyr_frames_image_write(tpath("m.fits"), NX, NY, v, NULL, NULL, 0));
    const char *p[1] = {tpath("m.fits")};
    pyr_frames_source_t *src = NULL;
    CHECK_OK(pyr_frames_source_open(p, 1, &src));
    if (src) {
        pyr_frames_source_info_t info;
        pyr_frames_source_get_info(src, &info);
        CHECK(info.nframes == 1 && info.has_header, "image: %lld frames, header %d", (long long)info.nframes, info.has_header);
        pyr_frames_source_close(&src);
    }
    /* an abort leaves the old file as it was */
    pyr_frames_cube_t *cube = NULL;
    CHECK_OK(pyr_frames_cube_open(tpath("r.npy"), NX, NY, NF, NULL, NULL, 0, &cube));
    pyr_frames_cube_abort(&cube);
    CHECK(cube == NULL, "abort clears");
    const char *q[1] = {tpath("r.npy")};
    CHECK_OK(pyr_frames_source_open(q, 1, &src));
    pyr_frames_source_close(&src);
    CHECK_FAILS(pyr_frames_cube_check_output("/dev/null"), PYR_ERR_IO, ""); /* FITS needs a file it can seek in */
    CHECK_OK(pyr_frames_cube_check_output("/dev/null.npy"));
}

static void test_table(void)
{
    CHECK(pyr_frames_table_is_rich("a.ecsv") && pyr_frames_table_is_rich("a.fits") && !pyr_frames_table_is_rich("a.csv"), "is_rich");
    pyr_frames_table_t *t = NULL;
    CHECK_OK(pyr_frames_table_open(tpath("c.csv"), NULL, &t));
    pyr_frames_table_row_t row = {2, NAN, 10.5, 11.25, NAN, NAN, 123.0, 7.5, -1};
    CHECK_OK(pyr_frames_table_add(t, &row));
    CHECK_OK(pyr_frames_table_commit(&t));
    CHECK(t == NULL, "commit clears");
    FILE *f = fopen(tpath("c.csv"), "rb");
    char text[256] = "";
    CHECK(f != NULL, "no c.csv");
    if (f) {
        size_t n = fread(text, 1, sizeof text - 1, f);
        text[n] = 0;
        fclose(f);
    }
    CHECK(!strncmp(text, "frame,x,y,flux,snr\n2,", 21), "c.csv: %s", text);
    pyr_frames_table_opts_t o = {1, 1, "RA---TAN DEC--TAN ICRS", "frame 0's", 0};
    CHECK_OK(pyr_frames_table_open(tpath("c.ecsv"), &o, &t));
    row.mjd = 60000.5;
    row.ra = 150.1;
    row.dec = 2.2;
    CHECK_OK(pyr_frames_table_add(t, &row));
    pyr_frames_table_abort(&t);
    struct stat sb;
    CHECK(stat(tpath("c.ecsv"), &sb) != 0, "an aborted table is at its path");
}

static void test_sizes(void)
{
    CHECK(pyr_struct_size("pyr_frames_source_info_t") == sizeof(pyr_frames_source_info_t), "source info");
    CHECK(pyr_struct_size("pyr_frames_table_row_t") == sizeof(pyr_frames_table_row_t), "table row");
    CHECK(pyr_struct_size("pyr_frames_table_opts_t") == sizeof(pyr_frames_table_opts_t), "table opts");
    CHECK(pyr_struct_size("pyr_problem_outputs_t") == sizeof(pyr_problem_outputs_t), "problem outputs");
    CHECK(pyr_struct_size("pyr_prediction_t") == sizeof(pyr_prediction_t), "prediction");
    CHECK(pyr_struct_size("pyr_longvector_model_t") == sizeof(pyr_longvector_model_t), "long-vector model");
    CHECK(pyr_struct_size("pyr_heatmap_opts_t") == sizeof(pyr_heatmap_opts_t), "heat map opts");
    CHECK(pyr_struct_size("pyr_plot_series_t") == sizeof(pyr_plot_series_t), "plot series");
    CHECK(pyr_struct_size("pyr_plot_opts_t") == sizeof(pyr_plot_opts_t), "plot opts");
    CHECK(pyr_struct_size("pyr_named_path_t") == sizeof(pyr_named_path_t), "named path");
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/pyrgrid_api_frames_io_XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_config();
    test_cubes_and_images();
    test_table();
    test_sizes();
    const char *names[] = {"c.ini", "r.npy", "r.fits", "m.npy", "m.fits", "c.csv"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) unlink(tpath(names[i]));
    rmdir(dir);
    return check_report();
}
