/* The parts index of MPI runs and its assembly (pyr_npy_index_read,
 * pyr_npy_assemble).  Every index must give PYR_OK or an error with a
 * message; never a crash, a leak, a read out of bounds or deep recursion.
 * An index that is read has every part inside the array and named inside
 * its directory; an assembled output holds exactly the array's values, each
 * from a part (the parts hold no zeros: a zero would be a byte no part
 * wrote), and a refused one leaves no output and no temporary.  The index
 * is written into a directory of a few small parts, made once, whose names
 * the fuzzer may find (fuzz/parts.dict). */
#include "fuzz_util.h" /* first: it asks for _GNU_SOURCE */

#include <dirent.h>
#include <sys/stat.h>

#include "io/npy.h"
#include "io/npy_part.h"

static char dir[512], index_path[600], out_path[600];

static const char *part_names[] = {"a.npy", "b.npy", "c.npy", "d.npy", "e.npy", "sub/f.npy"};

static void make_part(const char *name, int ndim, const int64_t *shape, pyr_precision_t p, double first)
{
    double v[16];
    float f[16];
    for (int i = 0; i < 16; i++) {
        v[i] = first + i;
        f[i] = (float)v[i];
    }
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (pyr_npy_write(path, ndim, shape, p, p == PYR_DOUBLE ? (const void *)v : (const void *)f) != PYR_OK) abort();
}

static void cleanup(void)
{
    char path[600];
    for (size_t i = 0; i < sizeof part_names / sizeof part_names[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, part_names[i]);
        unlink(path);
    }
    unlink(index_path);
    unlink(out_path);
    snprintf(path, sizeof path, "%s/sub", dir);
    rmdir(path);
    rmdir(dir);
}

static void setup(void)
{
    /* /dev/shm when there is one: the output's sync then costs nothing */
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp) tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(dir, sizeof dir, "%s/pyrgrid-fuzz-parts-XXXXXX", tmp);
    if (!mkdtemp(dir)) abort();
    snprintf(index_path, sizeof index_path, "%s/index.json", dir);
    snprintf(out_path, sizeof out_path, "%s/out.npy", dir);
    char sub[600];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    if (mkdir(sub, 0700) != 0) abort();
    static const int64_t s24[2] = {2, 4}, s4[1] = {4}, s122[3] = {1, 2, 2}, s22[2] = {2, 2};
    make_part("a.npy", 2, s24, PYR_DOUBLE, 1);
    make_part("b.npy", 2, s24, PYR_DOUBLE, 11);
    make_part("c.npy", 1, s4, PYR_DOUBLE, 21);
    make_part("d.npy", 3, s122, PYR_DOUBLE, 31);
    make_part("e.npy", 2, s24, PYR_FLOAT, 41);
    make_part("sub/f.npy", 2, s22, PYR_DOUBLE, 51);
    atexit(cleanup);
}

/* A name that leads out of the directory: absolute, or a ".." component. */
static int leads_out(const char *name)
{
    if (name[0] == '/') return 1;
    for (const char *c = name; *c;) {
        size_t n = strcspn(c, "/");
        if (n == 2 && c[0] == '.' && c[1] == '.') return 1;
        c += n;
        while (*c == '/') c++;
    }
    return 0;
}

/* Temporaries of the output left in the directory. */
static int temporaries(void)
{
    DIR *d = opendir(dir);
    if (!d) abort();
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] == '.' && strstr(e->d_name, ".tmp.")) n++;
    closedir(d);
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0]) setup();
    FILE *f = fopen(index_path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) abort();
    pyr_npy_index_t x;
    int64_t count = -1;
    if (pyr_npy_index_read(index_path, &x) == PYR_OK) {
        if (x.dims < 1 || x.dims > 3 || x.nparts < 0) abort();
        count = 1;
        for (int d = 0; d < x.dims; d++) {
            if (x.shape[d] < 1) abort();
            count *= x.shape[d];
        }
        for (int i = 0; i < x.nparts; i++) {
            const pyr_npy_part_t *p = &x.parts[i];
            if (!p->file[0] || leads_out(p->file)) abort();
            for (int d = 0; d < x.dims; d++)
                if (p->offset[d] < 0 || p->shape[d] < 1 || p->offset[d] > x.shape[d] - p->shape[d]) abort();
        }
        free(x.parts);
    } else if (x.parts || x.nparts) {
        abort(); /* documented: nothing for the caller to free */
    }
    if (pyr_npy_assemble(index_path, out_path) == PYR_OK) {
        if (count < 0) abort(); /* assembled an index the reader refused */
        pyr_npy_info_t info;
        void *all = NULL;
        if (pyr_npy_read_alloc(out_path, &info, &all) != PYR_OK || info.count != count) abort();
        for (int64_t i = 0; i < info.count; i++)
            if ((info.precision == PYR_DOUBLE ? ((const double *)all)[i] : (double)((const float *)all)[i]) == 0) abort();
        free(all);
        unlink(out_path);
    } else {
        struct stat st;
        if (lstat(out_path, &st) == 0) abort(); /* a refused index left an output */
    }
    if (temporaries()) abort();
    return 0;
}
