/* FDTD (Maxwell, Yee) benchmark, side by side on one grid: the naive method
 * in core, and the pyramid method out of core with a budget of 1/4 (or
 * other fractions) of the fields and materials, at the planner's height and
 * at listed ones.  The problem: a 3D float grid of n^3 nodes (nx ny nz
 * given with --grid), vacuum with a dielectric sphere (eps_r = 4, a per-node
 * coefficient field), PEC walls, a Ricker point source, one probe.
 *
 *   bench_maxwell [--grid N | --grid NXxNYxNZ] [--steps N] [--backend cuda|cpu]
 *                 [--methods naive,pyramid] [--fractions 4] [--heights 8,16,32]   (fraction 0: the automatic budget)
 *                 [--decomp auto,skewed,blocks,slabs]   (the pyramid runs once per listed decomposition; default auto)
 *                 [--precision float|double] [--cpml CELLS] [--kernel V1/V2/...]
 *                 [--grid NXxNY --mode tm|te]   (2D: the TM or TE mode on one plane)
 *
 * --kernel: the naive run again with each kernel variant (e.g. tile:4,16/fused:8,16; in 2D wave:8).
 * --features plain,dft,flux,disp,tfsf: the runs once per listed variant of the
 *         problem, each beside the plain one in the same process: dft adds a
 *         DFT monitor of Ez over the middle z plane at 10 frequencies, flux a
 *         flux plane there at 10 frequencies, disp makes the sphere a Drude
 *         metal (one term: its states advance every step), tfsf adds a plane
 *         wave's TF/SF box around the sphere (nodes n/4 to n - 4 on each
 *         axis; 2D: Ez along x in TM, Ey in TE); each row says its rate over
 *         the plain problem's with the same method and budget.
 * --peer: the straightforward CUDA code (maxwell_peer.cu: an H and an E
 *         kernel per step, one thread per cell) on the same problem after the
 *         naive runs, with its rates, pyrgrid's steady rate over its own, and
 *         the largest difference between its fields and the last naive run's.
 *
 * Rates are Yee cells (nodes) x steps / second: "e2e" times pyr_execute
 * whole (pinning, first upload, last download included), "steady" the
 * passes between the first progress call and the one before the last. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>

#include "core/field.h"
#include "pyrgrid.h"
#include "schemes/maxwell.h"
#include "schemes/scheme.h"
#ifdef PYR_BENCH_PEER
#include "maxwell_peer.h"
#endif

#define NFIELDS 21

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct {
    double t_first, t_last, t_prev;
    int64_t s_first, s_last, s_prev;
    int calls;
} progress_t;

static int on_progress(void *user, int64_t done, int64_t total)
{
    (void)total;
    progress_t *p = user;
    double t = now_s();
    if (p->calls++ == 0) {
        p->t_first = t;
        p->s_first = done;
    }
    p->t_prev = p->t_last;
    p->s_prev = p->s_last;
    p->t_last = t;
    p->s_last = done;
    return 0;
}

static int g_te; /* 2D (--grid NXxNY): the TE mode, else TM */

static void make(pyr_problem_t *p, const int64_t n[3], pyr_precision_t prec, int64_t steps, int cpml)
{
    pyr_problem_default(p);
    p->equation = PYR_EQ_MAXWELL;
    p->dims = n[2] == 1 ? 2 : 3;
    for (int a = 0; a < 3; a++) {
        p->n[a] = n[a];
        p->length[a] = a < p->dims ? (double)(n[a] - 1) / 20.0 : 1.0; /* 20 nodes per unit */
    }
    p->maxwell.te = p->dims == 2 && g_te;
    p->precision = prec;
    p->steps = steps;
    p->init = PYR_INIT_ZERO;
    pyr_maxwell_params_t *m = &p->maxwell;
    m->courant = 0.5;
    m->nshapes = 1;
    m->shapes[0].kind = PYR_SHAPE_SPHERE;
    for (int a = 0; a < 3; a++) m->shapes[0].lo[a] = a < p->dims ? p->length[a] * 0.6 : 0; /* (2D: a disc) */
    m->shapes[0].r = p->length[0] * 0.2;
    m->shapes[0].eps_r = 4;
    m->shapes[0].mu_r = 1;
    if (cpml > 0) {
        m->cpml_cells = cpml;
        m->cpml_faces = p->dims == 2 ? 0xf : 0x3f;
    }
    m->nsources = 1;
    pyr_source_t *s = &m->sources[0];
    for (int a = 0; a < 3; a++) s->node[a] = s->node_end[a] = n[a] / 3;
    s->component = p->maxwell.te ? PYR_EY : PYR_EZ;
    s->waveform = PYR_WAVE_RICKER;
    s->amplitude = 1;
    s->frequency = 2;
    s->delay = 0.6;
    m->nprobes = 1;
    m->probes[0].component = s->component;
    for (int a = 0; a < 3; a++) m->probes[0].node[a] = n[a] / 3 + (a == 0 ? 6 : 0);
}

typedef struct {
    double e2e, steady, probe_last;
    double setup_s, pin_s, unpin_s, before_s, steps_s, after_s; /* the phases of a run (print_phases) */
    int64_t height;
    int slots;
    uint64_t up, down;
    char decomp[16], host[16];
} result_t;

static double g_probe_last;
static pyr_status_t on_probe(void *user, int64_t first, int64_t count, const double *values, int nprobes)
{
    (void)user;
    (void)first;
    if (count > 0) g_probe_last = values[(count - 1) * nprobes];
    return PYR_OK;
}

static int run(const pyr_problem_t *p, const pyr_options_t *o, pyr_field_t **comp, result_t *r)
{
    pyr_plan_t *plan = NULL;
    if (pyr_plan_create(p, o, &plan) != PYR_OK) {
        fprintf(stderr, "plan: %s\n", pyr_last_error());
        return 1;
    }
    pyr_plan_info_t info;
    pyr_plan_get_info(plan, &info);
    r->height = info.height;
    r->slots = info.slots;
    snprintf(r->decomp, sizeof r->decomp, "%s", pyr_decomp_name(info.decomposition));
    /* the problem's fields made as the program makes them (initial.kind = zero: pages that read as zero, which an
     * in-core run sets on the device); the materials' fields the executor makes */
    const double ts = now_s();
    for (int c = 0; c < 6; c++) {
        pyr_field_destroy(&comp[c]);
        if (pyr_field_alloc_zero(p->dims, p->n, p->precision, &comp[c]) != PYR_OK) {
            fprintf(stderr, "fields: %s\n", pyr_last_error());
            pyr_plan_destroy(&plan);
            return 1;
        }
    }
    r->setup_s = now_s() - ts;
    pyr_field_t *fields[NFIELDS] = {NULL};
    for (int c = 0; c < 6; c++) fields[c] = comp[c];
    progress_t pr;
    memset(&pr, 0, sizeof pr);
    pyr_hooks_t hooks = {.progress = on_progress, .user = &pr, .probe = on_probe};
    pyr_run_info_t ri;
    double t0 = now_s();
    pyr_status_t st = pyr_execute_fields(plan, fields, NFIELDS, &hooks, &ri);
    double t1 = now_s();
    pyr_plan_destroy(&plan);
    if (st != PYR_OK) {
        fprintf(stderr, "run: %s\n", pyr_last_error());
        return 1;
    }
    const double cells = (double)pyr_problem_nodes(p);
    r->e2e = cells * (double)p->steps / (t1 - t0) * 1e-9;
    r->steady = pr.calls >= 3 && pr.t_prev > pr.t_first ? cells * (double)(pr.s_prev - pr.s_first) / (pr.t_prev - pr.t_first) * 1e-9 : r->e2e;
    r->up = ri.counts.uploaded;
    r->down = ri.counts.downloaded;
    r->probe_last = g_probe_last;
    /* before the first progress report: pinning, the materials' fields made, the upload and the first chunk's steps;
     * after the last: the download and unpinning */
    r->pin_s = ri.pin_seconds;
    r->unpin_s = ri.unpin_seconds;
    r->steps_s = r->steady > 0 ? cells * (double)p->steps / (r->steady * 1e9) : 0;
    r->before_s = pr.calls ? pr.t_first - t0 - r->pin_s - cells * (double)pr.s_first / (r->steady * 1e9) : 0;
    r->after_s = pr.calls ? t1 - pr.t_last - r->unpin_s : 0;
    snprintf(r->host, sizeof r->host, "%s", pyr_host_memory_name(ri.host_memory));
    return 0;
}

/* An in-core run's phases, and its end-to-end rate with the set-up of the problem's fields counted (as the program
 * runs it) over its steady rate. */
static void print_phases(const pyr_problem_t *p, const result_t *r)
{
    const double cells = (double)pyr_problem_nodes(p), total = r->setup_s + cells * (double)p->steps / (r->e2e * 1e9);
    printf("  phases: set-up %.3f s, host %s (pin %.3f s, unpin %.3f s), materials + upload %.3f s, steps %.3f s, download %.3f s; "
           "end to end with set-up %.3g G/s = %.2fx steady\n",
           r->setup_s, r->host, r->pin_s, r->unpin_s, r->before_s, r->steps_s, r->after_s, cells * (double)p->steps / total * 1e-9,
           r->steady > 0 ? cells * (double)p->steps / total * 1e-9 / r->steady : 0);
}

#ifdef PYR_BENCH_PEER
/* The peer on problem p; prints its row and how far its fields are from comp's. */
static void run_peer(const pyr_problem_t *p, pyr_field_t **comp, double pyr_steady)
{
    const pyr_scheme_t *sc = pyr_scheme_of(PYR_EQ_MAXWELL);
    pyr_coef_t k;
    sc->coefficients(p, &k);
    peer_problem_t q;
    memset(&q, 0, sizeof q);
    for (int a = 0; a < 3; a++) {
        q.n[a] = p->n[a];
        q.rh[a] = k.c[a];
    }
    q.te = p->maxwell.te;
    q.steps = p->steps;
    q.elem = (int)pyr_precision_size(p->precision);
    q.ca0 = k.c[4];
    q.cb0 = k.c[5];
    q.dh0 = k.c[6];
    pyr_field_t *cb = NULL;
    if (pyr_field_create(p, &cb) != PYR_OK || sc->init_input(p, PYR_MAXWELL_CB, cb) != PYR_OK) {
        fprintf(stderr, "peer: %s\n", pyr_last_error());
        pyr_field_destroy(&cb);
        return;
    }
    q.cb = cb->data;
    double *aux = NULL;
    int64_t naux = 0;
    if (p->maxwell.cpml_cells > 0 && sc->aux_coefficients && sc->aux_coefficients(p, &aux, &naux) == PYR_OK) {
        q.prof = aux;
        q.naux = naux;
    }
    double dt = 0;
    pyr_maxwell_dt(p, &dt);
    const pyr_source_t *src = &p->maxwell.sources[0];
    double *amp = malloc((size_t)p->steps * sizeof *amp);
    for (int64_t s = 0; s < p->steps; s++) amp[s] = pyr_maxwell_waveform(src, (double)(s + 1) * dt);
    q.amp = amp;
    q.src_comp = src->component;
    q.src_index = (src->node[2] * p->n[1] + src->node[1]) * p->n[0] + src->node[0];
    pyr_field_t *out[6] = {NULL};
    for (int c = 0; c < 6; c++)
        if (pyr_field_create(p, &out[c]) == PYR_OK) q.out[c] = out[c]->data;
    double loop = 0, all = 0;
    char err[256] = "";
    const double cells = (double)pyr_problem_nodes(p) * (double)p->steps;
    if (pyr_bench_maxwell_peer(&q, &loop, &all, err, sizeof err) != 0) {
        printf("peer (H and E kernels): failed: %s\n", err);
    } else {
        double diff = 0, top = 0;
        for (int c = 0; c < 6; c++) {
            if (!out[c]) continue;
            const int64_t m = pyr_field_count(out[c]);
            for (int64_t i = 0; i < m; i++) {
                const double a = p->precision == PYR_DOUBLE ? ((double *)out[c]->data)[i] : ((float *)out[c]->data)[i];
                const double b = p->precision == PYR_DOUBLE ? ((double *)comp[c]->data)[i] : ((float *)comp[c]->data)[i];
                if (fabs(a - b) > diff) diff = fabs(a - b);
                if (fabs(b) > top) top = fabs(b);
            }
        }
        printf("%-18s %7s %6s %5s %10.3g %10.3g   pyrgrid naive steady / peer = %.2fx; fields differ by %.2g of their largest value\n",
               "peer (H, E kernels)", "all", "1", "1", cells / all * 1e-9, cells / loop * 1e-9, pyr_steady / (cells / loop * 1e-9),
               top > 0 ? diff / top : diff);
    }
    fflush(stdout);
    for (int c = 0; c < 6; c++) pyr_field_destroy(&out[c]);
    pyr_field_destroy(&cb);
    free(aux);
    free(amp);
}
#endif

static int parse_list(const char *s, int64_t *out, int max)
{
    int n = 0;
    while (*s && n < max) {
        out[n++] = strtoll(s, (char **)&s, 10);
        if (*s == ',') s++;
        else break;
    }
    return n;
}

/* Problem p turned into the variant `feature` (see --features); 0 when it is not one. */
static int apply_feature(pyr_problem_t *p, const char *feature)
{
    char v[256];
    const int64_t *n = p->n;
    if (!strcmp(feature, "plain")) return 1;
    /* monitors' 10 frequencies: from what the run resolves to a quarter of the time step's rate */
    double dt = 0;
    if (pyr_maxwell_dt(p, &dt) != PYR_OK || dt <= 0) return 0;
    const double f0 = 2.0 / ((double)p->steps * dt), f1 = 0.25 / dt;
    if (!strcmp(feature, "dft")) {
        snprintf(v, sizeof v, "Ez plane z %lld freqs=%.6g:%.6g:10", (long long)(n[2] / 2), f0, f1 > f0 ? f1 : 2 * f0);
        return pyr_problem_set(p, "monitor.dft1", v) == PYR_OK;
    }
    if (!strcmp(feature, "flux")) {
        snprintf(v, sizeof v, "plane z %lld freqs=%.6g:%.6g:10", (long long)(n[2] / 2), f0, f1 > f0 ? f1 : 2 * f0);
        return pyr_problem_set(p, "monitor.flux1", v) == PYR_OK;
    }
    if (!strcmp(feature, "disp")) {
        snprintf(v, sizeof v, "sphere %g %g %g %g eps_r=1 drude=2 0.1", p->length[0] * 0.6, p->length[1] * 0.6, p->length[2] * 0.6,
                 p->length[0] * 0.2);
        return pyr_problem_set(p, "material.shape1", v) == PYR_OK;
    }
    if (!strcmp(feature, "tfsf")) {
        if (p->dims == 2) /* TM: Ez along x; TE: Ey along x */
            snprintf(v, sizeof v, "%s along +x box %lld %lld %lld %lld gaussian width=0.3 delay=1.2", p->maxwell.te ? "Ey" : "Ez",
                     (long long)(n[0] / 4), (long long)(n[1] / 4), (long long)(n[0] - 4), (long long)(n[1] - 4));
        else
            snprintf(v, sizeof v, "Ex along +z box %lld %lld %lld %lld %lld %lld gaussian width=0.3 delay=1.2", (long long)(n[0] / 4),
                     (long long)(n[1] / 4), (long long)(n[2] / 4), (long long)(n[0] - 4), (long long)(n[1] - 4), (long long)(n[2] - 4));
        return pyr_problem_set(p, "source.planewave1", v) == PYR_OK;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int64_t n[3] = {1024, 1024, 1024}, steps = 120, heights[16], fractions[8] = {4};
    int nheights = 0, nfractions = 1, cpml = 0;
    pyr_backend_kind_t backend = PYR_BACKEND_CUDA;
    pyr_precision_t prec = PYR_FLOAT;
    const char *methods = "naive,pyramid", *kernels = NULL, *features = "plain";
    pyr_decomp_t decomps[8] = {PYR_DECOMP_AUTO};
    int ndecomps = 1;
    int peer = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(a, "--grid")) {
            const int got = sscanf(v, "%ldx%ldx%ld", (long *)&n[0], (long *)&n[1], (long *)&n[2]);
            if (got == 2) n[2] = 1;
            else if (got != 3) n[0] = n[1] = n[2] = atoll(v);
            i++;
        } else if (!strcmp(a, "--steps")) steps = atoll(argv[++i]);
        else if (!strcmp(a, "--backend")) backend = !strcmp(argv[++i], "cpu") ? PYR_BACKEND_CPU : PYR_BACKEND_CUDA;
        else if (!strcmp(a, "--methods")) methods = argv[++i];
        else if (!strcmp(a, "--fractions")) nfractions = parse_list(argv[++i], fractions, 8);
        else if (!strcmp(a, "--heights")) nheights = parse_list(argv[++i], heights, 16);
        else if (!strcmp(a, "--precision")) prec = !strcmp(argv[++i], "double") ? PYR_DOUBLE : PYR_FLOAT;
        else if (!strcmp(a, "--cpml")) cpml = atoi(argv[++i]);
        else if (!strcmp(a, "--kernel")) kernels = argv[++i];
        else if (!strcmp(a, "--peer")) peer = 1;
        else if (!strcmp(a, "--decomp")) {
            char list[128];
            snprintf(list, sizeof list, "%s", argv[++i]);
            ndecomps = 0;
            for (char *d = strtok(list, ","); d && ndecomps < 8; d = strtok(NULL, ","))
                if (!pyr_decomp_from_name(d, 1, &decomps[ndecomps++])) {
                    fprintf(stderr, "--decomp: no decomposition '%s' (use auto, skewed, blocks, slabs; in 2D strips)\n", d);
                    return 2;
                }
        }
        else if (!strcmp(a, "--features")) features = argv[++i];
        else if (!strcmp(a, "--mode")) g_te = !strcmp(argv[++i], "te");
        else {
            fprintf(stderr, "unknown option %s\n", a);
            return 2;
        }
    }
    if (backend == PYR_BACKEND_CUDA && pyr_gpu_count() == 0) {
        printf("no usable GPU\n");
        return 77;
    }
    pyr_problem_t p;
    make(&p, n, prec, steps, cpml);
    char dev[256] = "cpu";
    if (backend == PYR_BACKEND_CUDA) pyr_gpu_describe(0, dev, sizeof dev);
    /* the components and cb */
    const double bytes_fields = (double)pyr_problem_nodes(&p) * (double)pyr_precision_size(prec) * (p.dims == 2 ? 4 : 7);
    printf("Maxwell (Yee) %s %s %lldx%lldx%lld, %lld steps, eps_r sphere (cb per node)%s, fields + materials %.2f GB, on %s\n",
           p.dims == 2 ? (p.maxwell.te ? "2D TE" : "2D TM") : "3D", pyr_precision_name(prec), (long long)n[0], (long long)n[1],
           (long long)n[2], (long long)steps, cpml ? ", CPML" : "",
           bytes_fields / 1e9, dev);
    pyr_field_t *comp[6];
    for (int c = 0; c < 6; c++)
        if (pyr_field_create(&p, &comp[c]) != PYR_OK) {
            fprintf(stderr, "%s\n", pyr_last_error());
            return 1;
        }
    printf("%-10s %-8s %7s %6s %5s %10s %10s %12s %12s %s\n", "method", "decomp", "budget", "height", "slots", "e2e G/s", "steady G/s",
           "uploaded", "downloaded", "probe(last)");
    char flist[128];
    snprintf(flist, sizeof flist, "%s", features);
    const char *feat[8];
    int nfeat = 0;
    for (char *t = strtok(flist, ","); t && nfeat < 8; t = strtok(NULL, ",")) feat[nfeat++] = t;
    double plain_naive = 0, plain_ooc[160] = {0};
    for (int fi = 0; fi < nfeat; fi++) {
        pyr_problem_t q;
        make(&q, n, prec, steps, cpml);
        if (!apply_feature(&q, feat[fi])) {
            fprintf(stderr, "--features: %s: %s (use plain, dft, flux, disp, tfsf)\n", feat[fi], pyr_last_error());
            return 2;
        }
        if (nfeat > 1) printf("== %s%s\n", feat[fi], fi == 0 && strcmp(feat[0], "plain") ? " (the rows below compare with it)" : "");
        double incore = 0, best_naive = 0;
        if (strstr(methods, "naive")) {
            pyr_options_t o;
            pyr_options_default(&o);
            o.backend = backend;
            o.method = PYR_METHOD_NAIVE;
            o.height = steps / 8 > 0 ? steps / 8 : 1;
            result_t r;
            if (run(&q, &o, comp, &r) == 0) {
                incore = best_naive = r.steady;
                if (fi == 0) plain_naive = r.steady;
                printf("%-10s %-8s %7s %6lld %5d %10.3g %10.3g %12llu %12llu %.9g", "naive", "-", "all", (long long)r.height, r.slots, r.e2e,
                       r.steady, (unsigned long long)r.up, (unsigned long long)r.down, r.probe_last);
                if (nfeat > 1 && plain_naive > 0) printf("   %.3fx plain", r.steady / plain_naive);
                printf("\n");
                print_phases(&q, &r);
                fflush(stdout);
            }
        }
        if (kernels) {
            char list[256];
            snprintf(list, sizeof list, "%s", kernels);
            for (char *k = strtok(list, "/"); k; k = strtok(NULL, "/")) {
                pyr_options_t o;
                pyr_options_default(&o);
                o.backend = backend;
                o.method = PYR_METHOD_NAIVE;
                o.height = steps / 8 > 0 ? steps / 8 : 1;
                snprintf(o.kernel, sizeof o.kernel, "%s", k);
                result_t r = {0};
                char name[40];
                snprintf(name, sizeof name, "naive %s", k);
                if (run(&q, &o, comp, &r) == 0 && r.steady > best_naive) best_naive = r.steady;
                if (r.steady > 0)
                    printf("%-18s %7s %6lld %5d %10.3g %10.3g %12llu %12llu %.9g\n", name, "all", (long long)r.height, r.slots, r.e2e, r.steady,
                           (unsigned long long)r.up, (unsigned long long)r.down, r.probe_last);
                fflush(stdout);
            }
        }
    #ifdef PYR_BENCH_PEER
        if (peer && backend == PYR_BACKEND_CUDA) run_peer(&q, comp, best_naive);
    #else
        if (peer) printf("peer: built without CUDA\n");
    #endif
        if (strstr(methods, "pyramid"))
            for (int fd = 0; fd < nfractions * ndecomps; fd++) {
                const int f = fd % nfractions, d = fd / nfractions;
                for (int h = -1; h < nheights; h++) {
                    pyr_options_t o;
                    pyr_options_default(&o);
                    o.backend = backend;
                    o.method = PYR_METHOD_PYRAMID;
                    o.decomposition = decomps[d];
                    o.memory = fractions[f] > 0 ? (uint64_t)(bytes_fields / (double)fractions[f]) : 0; /* 0: auto, the device's free memory */
                    o.height = h < 0 ? 0 : heights[h];
                    result_t r;
                    char budget[32];
                    if (fractions[f] > 0) snprintf(budget, sizeof budget, "1/%lld", (long long)fractions[f]);
                    else snprintf(budget, sizeof budget, "auto");
                    if (run(&q, &o, comp, &r) == 0) {
                        printf("%-10s %-8s %7s %6lld %5d %10.3g %10.3g %12llu %12llu %.9g%s", h < 0 ? "pyr(auto)" : "pyramid", r.decomp, budget,
                               (long long)r.height, r.slots, r.e2e, r.steady, (unsigned long long)r.up, (unsigned long long)r.down,
                               r.probe_last, incore > 0 ? "" : "\n");
                        const int slot = fd * 17 + h + 1;
                        if (fi == 0 && slot < 160) plain_ooc[slot] = r.steady;
                        if (incore > 0) printf("   %.2fx in-core", r.steady / incore);
                        if (nfeat > 1 && slot < 160 && plain_ooc[slot] > 0) printf("   %.3fx plain", r.steady / plain_ooc[slot]);
                        if (incore > 0) printf("\n");
                        fflush(stdout);
                    }
                }
            }
    }
    for (int c = 0; c < 6; c++) pyr_field_destroy(&comp[c]);
    return 0;
}
