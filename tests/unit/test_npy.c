/* Tests of src/io/npy.c and src/io/atomic.c.
 *
 *   test_npy               run the self-contained tests
 *   test_npy --write DIR   write reference arrays for test_npy_numpy.sh
 *   test_npy --check DIR   read the arrays NumPy wrote there */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "core/error.h"
#include "io/atomic.h"
#include "io/npy.h"

static char tmpdir[1024];

static const char *tpath(const char *name)
{
    static char buf[8][1200];
    static int k = 0;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, name);
    return buf[k];
}

/* Value i of every reference array: exact in float32 too. */
static double ref_value(int64_t i) { return (double)i * 0.5 - 7.0; }

static void fill(void *data, pyr_precision_t p, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        if (p == PYR_DOUBLE) ((double *)data)[i] = ref_value(i);
        else ((float *)data)[i] = (float)ref_value(i);
    }
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Number of leftover temporaries (".*.tmp.*") in dir. */
static int count_temporaries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] == '.' && strstr(e->d_name, ".tmp.")) n++;
    closedir(d);
    return n;
}

static unsigned char *slurp(const char *path, long *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    *len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)*len + 1);
    if (b && fread(b, 1, (size_t)*len, f) != (size_t)*len) {
        free(b);
        b = NULL;
    }
    fclose(f);
    return b;
}

/* Write a hand-made .npy: magic, version, header dict (padded to 64 when
 * pad), then data_bytes bytes of data. */
static void write_raw(const char *name, int major, int minor, const char *dict, int pad, size_t data_bytes)
{
    FILE *f = fopen(tpath(name), "wb");
    if (!f) {
        perror(name);
        exit(1);
    }
    size_t lenbytes = major == 1 ? 2 : 4;
    size_t dl = strlen(dict);
    size_t hlen = dl + 1;
    if (pad) {
        size_t total = 8 + lenbytes + hlen;
        hlen += (64 - total % 64) % 64;
    }
    fwrite("\x93NUMPY", 1, 6, f);
    fputc(major, f);
    fputc(minor, f);
    for (size_t i = 0; i < lenbytes; i++) fputc((int)((hlen >> (8 * i)) & 0xff), f);
    fwrite(dict, 1, dl, f);
    for (size_t i = dl; i + 1 < hlen; i++) fputc(' ', f);
    fputc('\n', f);
    for (size_t i = 0; i < data_bytes; i++) fputc(0, f);
    fclose(f);
}

/* ------------------------------------------------------------------ round trips */

static void round_trip(const char *name, int ndim, const int64_t *shape, pyr_precision_t p)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    size_t bytes = (size_t)n * pyr_precision_size(p);
    unsigned char *a = malloc(bytes + 1), *b = malloc(bytes + 1);
    fill(a, p, n);
    /* special values survive bit for bit */
    if (n >= 4) {
        if (p == PYR_DOUBLE) {
            ((double *)a)[0] = -0.0;
            ((double *)a)[1] = NAN;
            ((double *)a)[2] = INFINITY;
            ((double *)a)[3] = 1e-310; /* subnormal */
        } else {
            ((float *)a)[0] = -0.0f;
            ((float *)a)[1] = NAN;
            ((float *)a)[2] = -INFINITY;
            ((float *)a)[3] = 1e-40f;
        }
    }
    const char *path = tpath(name);
    CHECK_OK(pyr_npy_write(path, ndim, shape, p, a));
    memset(b, 0xAB, bytes);
    CHECK_OK(pyr_npy_read_expect(path, ndim, shape, p, b));
    CHECK(memcmp(a, b, bytes) == 0, "%s: data differ after round trip", name);

    pyr_npy_info_t info;
    CHECK_OK(pyr_npy_read_info(path, &info));
    CHECK(info.ndim == ndim && info.precision == p && info.count == n, "%s: info ndim %d prec %d count %lld",
          name, info.ndim, (int)info.precision, (long long)info.count);
    for (int i = 0; i < ndim && i < info.ndim; i++)
        CHECK(info.shape[i] == shape[i], "%s: shape[%d] = %lld", name, i, (long long)info.shape[i]);
    CHECK(info.data_offset % 64 == 0, "%s: data offset %ld not a multiple of 64", name, info.data_offset);
    CHECK(file_size(path) == info.data_offset + (long)bytes, "%s: file size %ld, expected %ld", name,
          file_size(path), info.data_offset + (long)bytes);

    void *c = NULL;
    pyr_npy_info_t info2;
    CHECK_OK(pyr_npy_read_alloc(path, &info2, &c));
    CHECK(c && memcmp(a, c, bytes) == 0, "%s: read_alloc data differ", name);
    CHECK(info2.count == n && info2.ndim == ndim, "%s: read_alloc info", name);
    free(c);
    free(a);
    free(b);
}

static void test_round_trips(void)
{
    int64_t s1[1] = {37}, s2[2] = {5, 7}, s3[3] = {2, 3, 4}, s0[1] = {0};
    round_trip("f32_1d.npy", 1, s1, PYR_FLOAT);
    round_trip("f64_1d.npy", 1, s1, PYR_DOUBLE);
    round_trip("f32_2d.npy", 2, s2, PYR_FLOAT);
    round_trip("f64_2d.npy", 2, s2, PYR_DOUBLE);
    round_trip("f32_3d.npy", 3, s3, PYR_FLOAT);
    round_trip("f64_3d.npy", 3, s3, PYR_DOUBLE);
    round_trip("empty.npy", 1, s0, PYR_DOUBLE);
    round_trip("scalar.npy", 0, NULL, PYR_DOUBLE);
    int64_t s8[8] = {1, 2, 1, 2, 1, 2, 1, 3};
    round_trip("f64_8d.npy", 8, s8, PYR_DOUBLE);
    /* big enough to take several stdio buffers */
    int64_t big[2] = {1025, 1025};
    round_trip("f64_big.npy", 2, big, PYR_DOUBLE);
}

/* The header is exactly what NumPy writes for version 1.0. */
static void check_header(const char *name, const char *dict)
{
    long len = 0;
    unsigned char *b = slurp(tpath(name), &len);
    CHECK(b != NULL, "cannot read back %s", name);
    if (!b) return;
    CHECK(len >= 64 && memcmp(b, "\x93NUMPY", 6) == 0, "%s: magic", name);
    CHECK(b[6] == 1 && b[7] == 0, "%s: version %d.%d, expected 1.0", name, b[6], b[7]);
    long hlen = b[8] | (long)b[9] << 8;
    CHECK((10 + hlen) % 64 == 0, "%s: data start %ld is not 64-byte aligned", name, 10 + hlen);
    CHECK(10 + hlen <= len && b[10 + hlen - 1] == '\n', "%s: header does not end with a newline", name);
    size_t dl = strlen(dict);
    CHECK((long)dl < hlen && memcmp(b + 10, dict, dl) == 0, "%s: header \"%.*s\", expected \"%s\"", name,
          (int)dl, (const char *)b + 10, dict);
    for (long i = 10 + (long)dl; i < 10 + hlen - 1; i++)
        if (b[i] != ' ') {
            CHECK(b[i] == ' ', "%s: padding byte %ld is 0x%02x, expected a space", name, i, b[i]);
            break;
        }
    free(b);
}

static void test_headers(void)
{
    check_header("f64_2d.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (5, 7), }");
    check_header("f32_1d.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (37,), }");
    check_header("f32_3d.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 4), }");
    check_header("scalar.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (), }");
}

/* ------------------------------------------------------------------ bad files */

static void test_bad_files(void)
{
    int64_t sq[2] = {1025, 1025}, s100[1] = {100}, s23[2] = {2, 3};
    double buf[100];
    void *data = NULL;
    pyr_npy_info_t info;

    write_raw("trunc.npy", 1, 0, "{'descr': '<f8', 'fortran_order': False, 'shape': (100,), }", 1, 400);
    CHECK_FAILS(pyr_npy_read_expect(tpath("trunc.npy"), 1, s100, PYR_DOUBLE, buf), PYR_ERR_FORMAT,
                "has 400 of 800 bytes of data");
    CHECK_FAILS(pyr_npy_read_info(tpath("trunc.npy"), &info), PYR_ERR_FORMAT, "has 400 of 800 bytes");
    CHECK_FAILS(pyr_npy_read_alloc(tpath("trunc.npy"), &info, &data), PYR_ERR_FORMAT, "truncated");
    CHECK(data == NULL, "read_alloc left data set after failure");
    CHECK(strstr(pyr_last_error(), "trunc.npy") != NULL, "message does not name the file: %s", pyr_last_error());

    write_raw("big_endian.npy", 1, 0, "{'descr': '>f8', 'fortran_order': False, 'shape': (100,), }", 1, 800);
    CHECK_FAILS(pyr_npy_read_expect(tpath("big_endian.npy"), 1, s100, PYR_DOUBLE, buf), PYR_ERR_FORMAT,
                "big-endian");
    CHECK(strstr(pyr_last_error(), "a.astype('<f8')") != NULL, "no conversion hint: %s", pyr_last_error());
    CHECK_FAILS(pyr_npy_read_alloc(tpath("big_endian.npy"), &info, &data), PYR_ERR_FORMAT, "big-endian");
    /* reliability review L26: a refusal names the one dtype that would be read, never "float32 or float64" */
    CHECK_FAILS(pyr_npy_read_info(tpath("big_endian.npy"), &info), PYR_ERR_FORMAT, "holds big-endian float64 ('>f8')");
    CHECK(strstr(pyr_last_error(), "a.astype('<f8')") && !strstr(pyr_last_error(), "<f4"), "read_info: %s", pyr_last_error());
    CHECK_FAILS(pyr_npy_read_info_as(tpath("big_endian.npy"), PYR_DOUBLE, &info), PYR_ERR_FORMAT, "needs little-endian float64 (<f8)");
    CHECK(!strstr(pyr_last_error(), "<f4"), "read_info_as double: %s", pyr_last_error());
    CHECK_FAILS(pyr_npy_read_info_as(tpath("big_endian.npy"), PYR_FLOAT, &info), PYR_ERR_FORMAT, "needs little-endian float32 (<f4)");
    CHECK(strstr(pyr_last_error(), "a.astype('<f4')") && !strstr(pyr_last_error(), "<f8)"), "read_info_as float: %s", pyr_last_error());
    CHECK_FAILS(pyr_npy_read_expect(tpath("big_endian.npy"), 1, s100, PYR_FLOAT, buf), PYR_ERR_FORMAT, "needs little-endian float32 (<f4)");
    write_raw("big_endian4.npy", 1, 0, "{'descr': '>f4', 'fortran_order': False, 'shape': (100,), }", 1, 400);
    CHECK_FAILS(pyr_npy_read_info(tpath("big_endian4.npy"), &info), PYR_ERR_FORMAT, "a.astype('<f4')");
    CHECK(!strstr(pyr_last_error(), "<f8"), "read_info >f4: %s", pyr_last_error());

    write_raw("int64.npy", 1, 0, "{'descr': '<i8', 'fortran_order': False, 'shape': (100,), }", 1, 800);
    CHECK_FAILS(pyr_npy_read_expect(tpath("int64.npy"), 1, s100, PYR_DOUBLE, buf), PYR_ERR_FORMAT,
                "holds int64 (<i8), needs float64 (<f8); convert with a.astype(np.float64)");
    CHECK_FAILS(pyr_npy_read_alloc(tpath("int64.npy"), &info, &data), PYR_ERR_FORMAT,
                "needs float32 (<f4) or float64 (<f8)");

    write_raw("f32.npy", 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (100,), }", 1, 400);
    CHECK_FAILS(pyr_npy_read_expect(tpath("f32.npy"), 1, s100, PYR_DOUBLE, buf), PYR_ERR_FORMAT,
                "holds float32 (<f4), needs float64 (<f8)");
    write_raw("f64.npy", 1, 0, "{'descr': '<f8', 'fortran_order': False, 'shape': (100,), }", 1, 800);
    CHECK_FAILS(pyr_npy_read_expect(tpath("f64.npy"), 1, s100, PYR_FLOAT, buf), PYR_ERR_FORMAT,
                "a.astype(np.float32)");
    /* read_info_as: any shape, the precision it is given */
    CHECK_OK(pyr_npy_read_info_as(tpath("f64.npy"), PYR_DOUBLE, &info));
    CHECK(info.ndim == 1 && info.shape[0] == 100 && info.precision == PYR_DOUBLE, "read_info_as f64: ndim %d", info.ndim);
    CHECK_FAILS(pyr_npy_read_info_as(tpath("f64.npy"), PYR_FLOAT, &info), PYR_ERR_FORMAT, "needs float32 (<f4)");

    write_raw("cplx.npy", 1, 0, "{'descr': '<c16', 'fortran_order': False, 'shape': (2,), }", 1, 32);
    CHECK_FAILS(pyr_npy_read_alloc(tpath("cplx.npy"), &info, &data), PYR_ERR_FORMAT, "complex128");
    write_raw("rec.npy", 1, 0, "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (2,), }", 1, 16);
    CHECK_FAILS(pyr_npy_read_alloc(tpath("rec.npy"), &info, &data), PYR_ERR_FORMAT, "structured");

    write_raw("fortran.npy", 1, 0, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }", 1, 48);
    CHECK_FAILS(pyr_npy_read_expect(tpath("fortran.npy"), 2, s23, PYR_DOUBLE, buf), PYR_ERR_FORMAT,
                "np.ascontiguousarray");
    CHECK_FAILS(pyr_npy_read_alloc(tpath("fortran.npy"), &info, &data), PYR_ERR_FORMAT, "Fortran");

    write_raw("shape.npy", 1, 0, "{'descr': '<f8', 'fortran_order': False, 'shape': (100, 200), }", 1, 160000);
    double *sqbuf = malloc(sizeof(double) * 1025 * 1025);
    CHECK_FAILS(pyr_npy_read_expect(tpath("shape.npy"), 2, sq, PYR_DOUBLE, sqbuf), PYR_ERR_FORMAT,
                "shape (100, 200), expected (1025, 1025)");
    CHECK_FAILS(pyr_npy_read_expect(tpath("shape.npy"), 1, s100, PYR_DOUBLE, sqbuf), PYR_ERR_FORMAT,
                "shape (100, 200), expected (100,)");
    free(sqbuf);

    FILE *f = fopen(tpath("magic.npy"), "wb");
    fputs("x,y\n1,2\n", f);
    fclose(f);
    CHECK_FAILS(pyr_npy_read_info(tpath("magic.npy"), &info), PYR_ERR_FORMAT, "is not a .npy file");
    f = fopen(tpath("empty_file.npy"), "wb");
    fclose(f);
    CHECK_FAILS(pyr_npy_read_info(tpath("empty_file.npy"), &info), PYR_ERR_FORMAT, "empty");
    f = fopen(tpath("archive.npy"), "wb");
    fputs("PK\x03\x04 rest of a zip", f);
    fclose(f);
    CHECK_FAILS(pyr_npy_read_info(tpath("archive.npy"), &info), PYR_ERR_FORMAT, ".npz");
    f = fopen(tpath("short_header.npy"), "wb");
    fwrite("\x93NUMPY\x01\x00\x76\x00{'descr'", 1, 18, f);
    fclose(f);
    CHECK_FAILS(pyr_npy_read_info(tpath("short_header.npy"), &info), PYR_ERR_FORMAT, "header truncated");

    write_raw("garbage.npy", 1, 0, "{'descr': '<f8', 'fortran_order': Nope, 'shape': (100,), }", 1, 800);
    CHECK_FAILS(pyr_npy_read_info(tpath("garbage.npy"), &info), PYR_ERR_FORMAT, "malformed .npy header");
    CHECK(strstr(pyr_last_error(), "True or False") != NULL, "message: %s", pyr_last_error());
    write_raw("garbage2.npy", 1, 0, "\x01\x02 not a dict at all", 1, 8);
    CHECK_FAILS(pyr_npy_read_info(tpath("garbage2.npy"), &info), PYR_ERR_FORMAT, "malformed .npy header");
    write_raw("nokey.npy", 1, 0, "{'descr': '<f8', 'fortran_order': False}", 1, 8);
    CHECK_FAILS(pyr_npy_read_info(tpath("nokey.npy"), &info), PYR_ERR_FORMAT, "no 'shape' key");
    write_raw("extrakey.npy", 1, 0, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'x': 1}", 1, 8);
    CHECK_FAILS(pyr_npy_read_info(tpath("extrakey.npy"), &info), PYR_ERR_FORMAT, "unexpected key 'x'");
    write_raw("badshape.npy", 1, 0, "{'descr': '<f8', 'fortran_order': False, 'shape': (1, -2), }", 1, 8);
    CHECK_FAILS(pyr_npy_read_info(tpath("badshape.npy"), &info), PYR_ERR_FORMAT, "shape tuple");
    write_raw("hugeshape.npy", 1, 0,
              "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", 1, 8);
    CHECK_FAILS(pyr_npy_read_info(tpath("hugeshape.npy"), &info), PYR_ERR_FORMAT, "too large");
    write_raw("ninedim.npy", 1, 0,
              "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1), }", 1, 8);
    CHECK_FAILS(pyr_npy_read_info(tpath("ninedim.npy"), &info), PYR_ERR_FORMAT, "more than 8 dimensions");
    write_raw("trailing.npy", 1, 0, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), } junk", 1, 8);
    CHECK_FAILS(pyr_npy_read_info(tpath("trailing.npy"), &info), PYR_ERR_FORMAT, "after the header dict");

    write_raw("v4.npy", 4, 0, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", 1, 8);
    CHECK_FAILS(pyr_npy_read_info(tpath("v4.npy"), &info), PYR_ERR_FORMAT, "version 4.0");

    CHECK_FAILS(pyr_npy_read_info(tpath("no_such_file.npy"), &info), PYR_ERR_IO, "does not exist");
    CHECK_FAILS(pyr_npy_read_info(tmpdir, &info), PYR_ERR_IO, "directory");
    /* issue 18: a FIFO is refused at once (opening it for reading waited for a writer forever) */
    if (mkfifo(tpath("input.fifo"), 0600) == 0) {
        CHECK_FAILS(pyr_npy_read_info(tpath("input.fifo"), &info), PYR_ERR_IO, "FIFO");
        unlink(tpath("input.fifo"));
    }

    /* Accepted variations: versions 2.0 and 3.0, double quotes, no trailing
     * comma, Python 2 longs, unpadded header, extra trailing data. */
    write_raw("v2.npy", 2, 0, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", 1, 48);
    CHECK_OK(pyr_npy_read_expect(tpath("v2.npy"), 2, s23, PYR_DOUBLE, buf));
    write_raw("v3.npy", 3, 0, "{\"descr\":\"<f4\",\"fortran_order\":False,\"shape\":(2,3)}", 0, 24);
    CHECK_OK(pyr_npy_read_expect(tpath("v3.npy"), 2, s23, PYR_FLOAT, buf));
    write_raw("py2.npy", 1, 0, "{'descr': '<f8', 'fortran_order': False, 'shape': (2L, 3L), }", 1, 56);
    CHECK_OK(pyr_npy_read_info(tpath("py2.npy"), &info));
    CHECK(info.ndim == 2 && info.shape[0] == 2 && info.shape[1] == 3 && info.count == 6, "py2 shape");
    write_raw("order.npy", 1, 0, "{'shape': (3,), 'fortran_order': False, 'descr': '<f4'}", 1, 12);
    CHECK_OK(pyr_npy_read_info(tpath("order.npy"), &info));
    CHECK(info.ndim == 1 && info.shape[0] == 3 && info.precision == PYR_FLOAT, "order.npy info");
    write_raw("extra_data.npy", 1, 0, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", 1, 64);
    CHECK_OK(pyr_npy_read_expect(tpath("extra_data.npy"), 2, s23, PYR_DOUBLE, buf));
}

/* ------------------------------------------------------------------ atomic writes */

static void test_atomic(void)
{
    int64_t s[1] = {4};
    double v[4] = {1, 2, 3, 4};
    char missing_dir[1200], path[1300];
    snprintf(missing_dir, sizeof missing_dir, "%s/no_such_dir", tmpdir);
    snprintf(path, sizeof path, "%s/x.npy", missing_dir);
    CHECK_FAILS(pyr_npy_write(path, 1, s, PYR_DOUBLE, v), PYR_ERR_IO, "does not exist");
    CHECK(strstr(pyr_last_error(), "no_such_dir") != NULL, "message lacks the directory: %s", pyr_last_error());
    CHECK(!file_exists(missing_dir), "the missing directory was created");
    CHECK_FAILS(pyr_check_writable(path), PYR_ERR_IO, "does not exist");
    CHECK_FAILS(pyr_check_writable(tmpdir), PYR_ERR_IO, "directory");
    CHECK_FAILS(pyr_npy_write(tpath(""), 1, s, PYR_DOUBLE, v), PYR_ERR_IO, "directory");
    CHECK_OK(pyr_check_writable(tpath("later.npy")));
    CHECK(!file_exists(tpath("later.npy")), "pyr_check_writable created the file");
    CHECK_OK(pyr_check_writable("relative_name_in_cwd.npy"));
    CHECK(!file_exists("relative_name_in_cwd.npy"), "pyr_check_writable created the file");

    /* A regular file in the way of a directory. */
    snprintf(path, sizeof path, "%s/f64.npy/x.npy", tmpdir);
    CHECK_FAILS(pyr_npy_write(path, 1, s, PYR_DOUBLE, v), PYR_ERR_IO, "not a directory");
    CHECK_FAILS(pyr_check_writable(path), PYR_ERR_IO, "not a directory");

    /* Replacing a file: new contents, ordinary permissions. */
    umask(022);
    const char *rp = tpath("replace.npy");
    CHECK_OK(pyr_npy_write(rp, 1, s, PYR_DOUBLE, v));
    v[0] = 42;
    CHECK_OK(pyr_npy_write(rp, 1, s, PYR_DOUBLE, v));
    double back[4] = {0};
    CHECK_OK(pyr_npy_read_expect(rp, 1, s, PYR_DOUBLE, back));
    CHECK(back[0] == 42, "replaced file holds %g", back[0]);
    struct stat st;
    CHECK(stat(rp, &st) == 0 && (st.st_mode & 0777) == 0644, "mode %o, expected 644", (unsigned)st.st_mode & 0777);

    /* A read-only directory (not meaningful as root, who may write anyway). */
    if (geteuid() != 0) {
        char ro[1200], rop[1300];
        snprintf(ro, sizeof ro, "%s/readonly", tmpdir);
        mkdir(ro, 0555);
        snprintf(rop, sizeof rop, "%s/x.npy", ro);
        CHECK_FAILS(pyr_npy_write(rop, 1, s, PYR_DOUBLE, v), PYR_ERR_IO, "not writable");
        CHECK_FAILS(pyr_check_writable(rop), PYR_ERR_IO, "not writable");
        CHECK(count_temporaries(ro) == 0, "temporary left in %s", ro);
        rmdir(ro);
    }

    /* A write that fails half way (file size limit): no partial file, no
     * temporary, and an existing file of that name is left as it was. */
    long before = file_size(rp);
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = 1 << 20;
    signal(SIGXFSZ, SIG_IGN);
    if (setrlimit(RLIMIT_FSIZE, &lim) == 0) {
        int64_t bs[1] = {1 << 19}; /* 4 MiB of doubles */
        double *big = calloc((size_t)bs[0], sizeof(double));
        CHECK_FAILS(pyr_npy_write(tpath("toolarge.npy"), 1, bs, PYR_DOUBLE, big), PYR_ERR_IO, "toolarge.npy");
        CHECK(!file_exists(tpath("toolarge.npy")), "a partial toolarge.npy was left");
        CHECK_FAILS(pyr_npy_write(rp, 1, bs, PYR_DOUBLE, big), PYR_ERR_IO, "replace.npy");
        CHECK(file_size(rp) == before, "replace.npy changed size to %ld after a failed write", file_size(rp));
        setrlimit(RLIMIT_FSIZE, &old);
        free(big);
    }
    CHECK(count_temporaries(tmpdir) == 0, "temporaries left in %s", tmpdir);

    /* Abort and commit on their own. */
    pyr_atomic_file_t af;
    memset(&af, 0, sizeof af);
    pyr_atomic_abort(&af);
    CHECK_OK(pyr_atomic_open(&af, tpath("aborted.txt")));
    fputs("hello", af.fp);
    pyr_atomic_abort(&af);
    pyr_atomic_abort(&af);
    CHECK(!file_exists(tpath("aborted.txt")) && count_temporaries(tmpdir) == 0, "abort left files");
    CHECK_OK(pyr_atomic_open(&af, tpath("committed.txt")));
    fputs("hello", af.fp);
    CHECK_OK(pyr_atomic_commit(&af));
    CHECK(file_size(tpath("committed.txt")) == 5 && af.fp == NULL && af.path == NULL, "commit");
    CHECK_FAILS(pyr_atomic_open(&af, ""), PYR_ERR_ARG, "empty");

    /* Argument errors. */
    CHECK_FAILS(pyr_npy_write(tpath("bad.npy"), 9, s, PYR_DOUBLE, v), PYR_ERR_ARG, "ndim = 9");
    int64_t neg[1] = {-1};
    CHECK_FAILS(pyr_npy_write(tpath("bad.npy"), 1, neg, PYR_DOUBLE, v), PYR_ERR_ARG, "(-1,)");
    CHECK_FAILS(pyr_npy_write(tpath("bad.npy"), 1, s, PYR_DOUBLE, NULL), PYR_ERR_ARG, "NULL");
    CHECK(!file_exists(tpath("bad.npy")), "bad.npy written");
}

/* ------------------------------------------------------------------ NumPy exchange */

static int write_for_numpy(const char *dir)
{
    snprintf(tmpdir, sizeof tmpdir, "%s", dir);
    int64_t s1[1] = {37}, s2[2] = {5, 7}, s3[3] = {2, 3, 4};
    double d[64];
    float f[64];
    fill(d, PYR_DOUBLE, 64);
    fill(f, PYR_FLOAT, 64);
    CHECK_OK(pyr_npy_write(tpath("c_f32_1d.npy"), 1, s1, PYR_FLOAT, f));
    CHECK_OK(pyr_npy_write(tpath("c_f64_2d.npy"), 2, s2, PYR_DOUBLE, d));
    CHECK_OK(pyr_npy_write(tpath("c_f32_3d.npy"), 3, s3, PYR_FLOAT, f));
    CHECK_OK(pyr_npy_write(tpath("c_f64_scalar.npy"), 0, NULL, PYR_DOUBLE, d));
    return check_report();
}

static void expect_numpy_file(const char *name, int ndim, const int64_t *shape, pyr_precision_t p)
{
    double d[64];
    float f[64];
    void *buf = p == PYR_DOUBLE ? (void *)d : (void *)f;
    CHECK_OK(pyr_npy_read_expect(tpath(name), ndim, shape, p, buf));
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    for (int64_t i = 0; i < n; i++) {
        double v = p == PYR_DOUBLE ? d[i] : f[i];
        if (v != ref_value(i)) {
            CHECK(v == ref_value(i), "%s[%lld] = %g, expected %g", name, (long long)i, v, ref_value(i));
            break;
        }
    }
}

static int check_numpy_files(const char *dir)
{
    snprintf(tmpdir, sizeof tmpdir, "%s", dir);
    int64_t s1[1] = {37}, s2[2] = {5, 7}, s3[3] = {2, 3, 4}, s23[2] = {2, 3};
    expect_numpy_file("np_f32_1d.npy", 1, s1, PYR_FLOAT);
    expect_numpy_file("np_f64_2d.npy", 2, s2, PYR_DOUBLE);
    expect_numpy_file("np_f32_3d.npy", 3, s3, PYR_FLOAT);
    expect_numpy_file("np_f64_2d_v2.npy", 2, s2, PYR_DOUBLE);
    expect_numpy_file("np_f64_2d_v3.npy", 2, s2, PYR_DOUBLE);
    pyr_npy_info_t info;
    void *data = NULL;
    CHECK_OK(pyr_npy_read_alloc(tpath("np_f64_2d.npy"), &info, &data));
    CHECK(info.ndim == 2 && info.shape[0] == 5 && info.shape[1] == 7 && info.precision == PYR_DOUBLE,
          "np_f64_2d.npy info");
    free(data);
    double buf[64];
    CHECK_FAILS(pyr_npy_read_expect(tpath("np_i64.npy"), 2, s23, PYR_DOUBLE, buf), PYR_ERR_FORMAT,
                "holds int64 (<i8), needs float64 (<f8)");
    CHECK_FAILS(pyr_npy_read_expect(tpath("np_fortran.npy"), 2, s23, PYR_DOUBLE, buf), PYR_ERR_FORMAT,
                "np.ascontiguousarray");
    CHECK_FAILS(pyr_npy_read_expect(tpath("np_big.npy"), 2, s23, PYR_DOUBLE, buf), PYR_ERR_FORMAT, "big-endian");
    CHECK_FAILS(pyr_npy_read_expect(tpath("np_f64_2d.npy"), 2, s23, PYR_DOUBLE, buf), PYR_ERR_FORMAT,
                "shape (5, 7), expected (2, 3)");
    return check_report();
}

/* ------------------------------------------------------------------ main */

static void remove_tree_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char p[1400];
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write") == 0) return write_for_numpy(argv[2]);
    if (argc == 3 && strcmp(argv[1], "--check") == 0) return check_numpy_files(argv[2]);
    if (argc != 1) {
        fprintf(stderr, "usage: %s [--write DIR | --check DIR]\n", argv[0]);
        return 2;
    }
    snprintf(tmpdir, sizeof tmpdir, "%s/test_npy_XXXXXX", PYR_BINARY_DIR);
    if (!mkdtemp(tmpdir)) {
        snprintf(tmpdir, sizeof tmpdir, "/tmp/test_npy_XXXXXX");
        if (!mkdtemp(tmpdir)) {
            perror("mkdtemp");
            return 1;
        }
    }
    test_round_trips();
    test_headers();
    test_bad_files();
    test_atomic();
    int rc = check_report();
    if (rc == 0 && !getenv("PYR_KEEP")) remove_tree_files(tmpdir);
    else fprintf(stderr, "files kept in %s\n", tmpdir);
    return rc;
}
