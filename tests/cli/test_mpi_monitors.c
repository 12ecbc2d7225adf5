/* Maxwell's DFT and flux monitors, and the far field made from them, over MPI
 * ranks (issue 46; docs/multi-gpu-and-mpi.md): under mpirun -np 1..4, 2D TM,
 * 2D TE and 3D problems with DFT point, box and plane monitors, flux planes and
 * a closed box of flux planes (the far field's surface), run by
 * pyr_execute_mpi_fields with spectra attached, on every partition the test
 * names (slabs along each axis, blocks, two devices per rank): every rank's
 * spectra (each monitor's transforms, its steps, each flux spectrum and the far
 * field at several directions) equal, bit for bit, those of one process
 * running the naive method.  Each node's transforms are summed by the rank
 * owning it, so without the ranks' sharing every rank holds zeros elsewhere and
 * the comparison fails.  A run cancelled on the last rank still stops every
 * rank with that rank's message.
 *
 *   mpirun -np P test_mpi_monitors */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "maxwell_util.h"
#include "pyrgrid_mpi.h"

static int rank, ranks;

static void set_ok(pyr_problem_t *p, const char *key, const char *value)
{
    pyr_status_t st = pyr_problem_set(p, key, value);
    CHECK(st == PYR_OK, "set %s = %s: %s", key, value, pyr_last_error());
}

/* flux(first) .. flux(first + 2 dims - 1): the faces of a box of nodes lo .. hi (each axis), the far field's surface */
static void set_box(pyr_problem_t *p, int first, int lo, int hi, const char *freqs)
{
    char key[32], value[160];
    int m = first;
    for (int a = 0; a < p->dims; a++)
        for (int side = 0; side < 2; side++, m++) {
            int len = snprintf(value, sizeof value, "plane %c %d", "xyz"[a], side ? hi : lo);
            for (int b = 0; b < p->dims; b++)
                if (b != a) len += snprintf(value + len, sizeof value - (size_t)len, " %d %d", lo, hi);
            snprintf(value + len, sizeof value - (size_t)len, " freqs=%s", freqs);
            snprintf(key, sizeof key, "monitor.flux%d", m);
            set_ok(p, key, value);
        }
}

/* 2D: CPML all round, a source inside a box of flux lines, monitors of every kind. */
static void make_2d(pyr_problem_t *p, int te)
{
    const int64_t n[3] = {57, 45, 1};
    const double len[3] = {5.6, 4.4, 1};
    make_maxwell(p, 2, n, len, te, PYR_DOUBLE, 120, 0.6);
    set_ok(p, "boundary.kind", "cpml");
    set_ok(p, "boundary.cpml_cells", "6");
    set_ok(p, "source.source1", te ? "Hz point 27 21 ricker frequency=0.7 delay=1.6" : "Ez point 27 21 ricker frequency=0.7 delay=1.6");
    set_ok(p, "monitor.dft1", te ? "Ex,Ey,Hz box 14 9 41 33 freqs=0.3,0.55,0.8" : "Ez,Hx,Hy box 14 9 41 33 freqs=0.3,0.55,0.8");
    set_ok(p, "monitor.dft2", te ? "Hz point 33 27 freqs=0.3:0.9:8" : "Ez point 33 27 freqs=0.3:0.9:8");
    set_ok(p, "monitor.dft3", te ? "Ey plane y 22 freqs=0.5" : "Ez plane y 22 freqs=0.5");
    set_box(p, 1, 12, 36, "0.5,0.7,0.9");
    set_ok(p, "monitor.flux5", "plane x 44 freqs=0.3:0.9:15");
}

static void make_3d(pyr_problem_t *p)
{
    const int64_t n[3] = {27, 23, 21};
    make_maxwell(p, 3, n, NULL, 0, PYR_DOUBLE, 36, 0.5);
    set_ok(p, "boundary.kind", "cpml");
    set_ok(p, "boundary.cpml_cells", "4");
    set_ok(p, "source.source1", "Ez point 13 11 10 ricker frequency=4 delay=0.25");
    set_ok(p, "monitor.dft1", "Ex,Hz box 8 7 6 18 15 14 freqs=3,4,6");
    set_ok(p, "monitor.dft2", "Ez point 15 12 11 freqs=3,5");
    set_ok(p, "monitor.dft3", "Ey,Hx plane z 12 freqs=4");
    set_box(p, 1, 7, 15, "3,5");
    set_ok(p, "monitor.flux7", "plane y 17 freqs=3:8:4");
}

/* Every monitor's transforms and steps, each flux spectrum and the far field of the box, concatenated. */
typedef struct {
    double *v;
    size_t n;
} values_t;

static pyr_status_t push(values_t *out, size_t add, double **at)
{
    double *g = realloc(out->v, (out->n + add + 1) * sizeof *g);
    if (!g) return pyr_fail(PYR_ERR_NOMEM, "test: out of memory");
    out->v = g;
    *at = g + out->n;
    out->n += add;
    return PYR_OK;
}

static pyr_status_t collect(const pyr_problem_t *p, const pyr_spectra_t *s, values_t *out)
{
    memset(out, 0, sizeof *out);
    const int ndft = p->maxwell.ndft;
    for (int m = 0; m < pyr_spectra_count(s); m++) {
        pyr_monitor_info_t info;
        PYR_TRY(pyr_spectra_info(s, m, &info));
        const size_t k = (size_t)(info.ncomponents * info.nfreq * info.nnodes);
        double *at;
        PYR_TRY(push(out, 2 * k + 1 + (info.flux ? (size_t)info.nfreq : 0), &at));
        at[0] = (double)info.steps;
        PYR_TRY(pyr_spectra_dft(s, m, at + 1, at + 1 + k));
        if (info.flux) PYR_TRY(pyr_spectra_flux(s, m, at + 1 + 2 * k));
    }
    /* the far field of the box flux1 .. flux(2 dims), at its frequencies, in several directions */
    int surface[6];
    const int nsurf = 2 * p->dims;
    for (int i = 0; i < nsurf; i++) surface[i] = ndft + i;
    enum { ND = 7 };
    double theta[ND], phi[ND];
    for (int d = 0; d < ND; d++) theta[d] = 0.2 + 0.4 * d, phi[d] = -1.1 + 0.9 * d;
    pyr_monitor_info_t info;
    PYR_TRY(pyr_spectra_info(s, surface[0], &info));
    const size_t nf = (size_t)info.nfreq;
    double *at;
    PYR_TRY(push(out, nf * ND * 13, &at));
    return pyr_spectra_farfield(p, s, nsurf, surface, ND, p->dims == 3 ? theta : NULL, phi, 2.5, at, at + nf * ND, at + 7 * nf * ND);
}

/* One process, the naive method: the reference (every rank makes it itself: the grids are small). */
static pyr_status_t reference(const pyr_problem_t *p0, values_t *out)
{
    pyr_problem_t p = *p0;
    pyr_spectra_t *s = NULL;
    PYR_TRY(pyr_spectra_create(&p, &s));
    pyr_status_t st = pyr_spectra_attach(&p, s);
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.threads = 1;
    o.method = PYR_METHOD_NAIVE;
    mx_result_t r;
    memset(&r, 0, sizeof r);
    if (st == PYR_OK) st = mx_run(&p, &o, NULL, &r);
    mx_free(&r);
    if (st == PYR_OK) st = collect(&p, s, out);
    pyr_spectra_destroy(&s);
    return st;
}

static pyr_status_t over_ranks(const pyr_problem_t *p0, const pyr_options_t *o, const pyr_hooks_t *hooks, values_t *out)
{
    memset(out, 0, sizeof *out);
    pyr_problem_t p = *p0;
    pyr_spectra_t *s = NULL;
    PYR_TRY(pyr_spectra_create(&p, &s)); /* (the same on every rank) */
    pyr_status_t st = pyr_spectra_attach(&p, s);
    pyr_field_t *part[MX_FIELDS] = {NULL};
    pyr_mpi_info_t info;
    if (st == PYR_OK) st = pyr_execute_mpi_fields(&p, o, MPI_COMM_WORLD, hooks, part, MX_FIELDS, &info);
    for (int i = 0; i < MX_FIELDS; i++) pyr_field_destroy(&part[i]);
    if (st == PYR_OK) st = collect(&p, s, out);
    pyr_spectra_destroy(&s);
    return st;
}

static int compare(const char *label, const values_t *ref, const values_t *got)
{
    int bad = 0;
    CHECK(got->n == ref->n, "%s: %zu values, one process %zu", label, got->n, ref->n);
    if (got->n != ref->n) return 1;
    for (size_t i = 0; i < got->n && !bad; i++)
        if (memcmp(&got->v[i], &ref->v[i], sizeof(double))) {
            CHECK(0, "rank %d: %s: value %zu of %zu is %.17g, one process's %.17g", rank, label, i, got->n, got->v[i], ref->v[i]);
            bad = 1;
        }
    return bad;
}

static int check_problem(const char *name, const pyr_problem_t *p)
{
    values_t ref;
    pyr_status_t st = reference(p, &ref);
    CHECK(st == PYR_OK, "%s: one process: %s", name, pyr_last_error());
    if (st != PYR_OK) return 1;
    double peak = 0;
    for (size_t i = 0; i < ref.n; i++) peak = fmax(peak, fabs(ref.v[i]));
    CHECK(peak > 0, "%s: the monitors saw nothing", name);
    struct {
        const char *what, *partition, *devices;
        int method;
    } cases[] = {
        {"chosen cut", "", "", PYR_METHOD_AUTO},
        {"slabs", "slabs", "", PYR_METHOD_NAIVE},
        {"cut along x", "", "", PYR_METHOD_NAIVE},
        {"cut along y", "", "", PYR_METHOD_PYRAMID},
        {"two devices per rank", "", "0,0", PYR_METHOD_NAIVE},
    };
    int bad = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        pyr_options_t o;
        pyr_options_default(&o);
        o.backend = PYR_BACKEND_CPU;
        o.threads = 1;
        o.method = cases[c].method;
        snprintf(o.partition, sizeof o.partition, "%s", cases[c].partition);
        snprintf(o.devices, sizeof o.devices, "%s", cases[c].devices);
        if (c == 2) snprintf(o.partition, sizeof o.partition, "%dx1x1", ranks);
        if (c == 3) snprintf(o.partition, sizeof o.partition, "1x%dx1", ranks);
        if (c == 3) o.exchange = 3;
        char label[160];
        snprintf(label, sizeof label, "%s over %d rank%s, %s", name, ranks, ranks > 1 ? "s" : "", cases[c].what);
        values_t got;
        st = over_ranks(p, &o, NULL, &got);
        CHECK(st == PYR_OK, "%s: %s", label, pyr_last_error());
        int mine = st != PYR_OK || compare(label, &ref, &got), any = 0;
        MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        bad |= any;
        free(got.v);
    }
    free(ref.v);
    return bad;
}

static int cancel_last(void *user, int64_t done, int64_t total)
{
    (void)user;
    (void)total;
    return rank == ranks - 1 && done >= 2;
}

/* a run with monitors cancelled on the last rank: every rank stops with its message, the spectra are not shared */
static void failures(void)
{
    pyr_problem_t p;
    make_2d(&p, 0);
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.threads = 1;
    o.exchange = 1;
    pyr_hooks_t hooks = {.progress = cancel_last};
    values_t got = {NULL, 0};
    char want[64];
    snprintf(want, sizeof want, ranks > 1 ? "rank %d: run cancelled" : "run cancelled", ranks - 1);
    const char *expect = want;
    CHECK_FAILS(over_ranks(&p, &o, &hooks, &got), PYR_ERR_CANCELLED, expect);
    free(got.v);
}

int main(int argc, char **argv)
{
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    failures();
    pyr_problem_t p;
    int bad = 0;
    make_2d(&p, 0);
    bad += check_problem("2D TM", &p);
    make_2d(&p, 1);
    bad += check_problem("2D TE", &p);
    make_3d(&p);
    bad += check_problem("3D", &p);
    if (rank == 0)
        printf("%s: monitors' spectra and far fields over %d rank%s: %s one process's bits\n", argv[0], ranks, ranks > 1 ? "s" : "",
               bad ? "NOT" : "the same as");
    int mine = check_report(), worst = 0;
    MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return worst;
}
