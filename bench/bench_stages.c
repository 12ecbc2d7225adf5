/* Where the time of a pyramid pass goes on the GPU, against the model: the
 * pass run with its slots in flight, then again with every operation alone
 * (the CUDA backend's serial mode), next to the model's stage sums and its
 * prediction of the overlapped pass.  Run it to see which stage the model
 * gets wrong, or how far the pipeline is from its slowest engine.
 *
 *   bench_stages [--maxwell CPML_CELLS | --poisson jacobi|chebyshev] DIMS N PRECISION DECOMP HEIGHTS BUDGET_MIB [SLOTS] [PASSES]
 *   e.g. bench_stages 3 1025 float blocks 24,32,48 1024 3
 *        bench_stages --maxwell 12 3 640 float skewed 24 1750
 *        bench_stages --poisson chebyshev 3 1024 float skewed 32,40 2048
 *
 * N nodes per axis; HEIGHTS a comma list; SLOTS 0 = auto; PASSES (default
 * 4) per run, the first one untimed.  Constants from the wisdom file
 * (PYRGRID_WISDOM), else the defaults.  PYR_TIMELINE=N adds a third run with
 * the backend's event timeline: how busy each engine was in the last pass,
 * and its first N operations one by one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/cuda/cuda_api.h"
#include "backend/device.h"
#include "core/field.h"
#include "plan/model.h"
#include "schemes/scheme.h"
#include "pass_clock.h"
#include "pyrgrid.h"
#include "bench_wisdom.h"


static int by_start(const void *a, const void *b)
{
    double x = ((const pyr_cuda_span_t *)a)->start_ms, y = ((const pyr_cuda_span_t *)b)->start_ms;
    return x < y ? -1 : x > y;
}

/* The last pass of a timeline: for each kind of operation, how long its
 * engine was busy (union of the spans), the mean span, and for the compute
 * engine the idle gaps; then the first operations one by one. */
static void timeline_report(pyr_cuda_span_t *sp, int n, int passes, int detail)
{
    int per = n / passes, first = n - per;
    if (per <= 0) return;
    double t0 = sp[first].start_ms, t1 = sp[first].end_ms;
    for (int i = first; i < n; i++) {
        if (sp[i].start_ms < t0) t0 = sp[i].start_ms;
        if (sp[i].end_ms > t1) t1 = sp[i].end_ms;
    }
    static const char *const names[4] = {"up", "comp", "down", "copy"};
    printf("    timeline of the last pass (%d operations, %.2f ms):", per, t1 - t0);
    pyr_cuda_span_t *k = malloc((size_t)per * sizeof *k);
    if (!k) return;
    for (int kind = 0; kind < 4; kind++) {
        int m = 0;
        double sum = 0;
        for (int i = first; i < n; i++)
            if (sp[i].kind == kind) {
                k[m++] = sp[i];
                sum += sp[i].end_ms - sp[i].start_ms;
            }
        qsort(k, (size_t)m, sizeof *k, by_start);
        double busy = 0, gaps = 0, big = 0, end = -1e300;
        for (int i = 0; i < m; i++) {
            double s = k[i].start_ms > end ? k[i].start_ms : end;
            if (k[i].end_ms > s) busy += k[i].end_ms - s;
            if (i > 0 && k[i].start_ms > end) {
                gaps += k[i].start_ms - end;
                if (k[i].start_ms - end > big) big = k[i].start_ms - end;
            }
            if (k[i].end_ms > end) end = k[i].end_ms;
        }
        printf(" %s busy %.2f ms (%d ops, mean %.3f ms, idle between %.2f ms, longest %.3f)", names[kind], busy, m, m ? sum / m : 0,
               gaps, big);
    }
    printf("\n");
    for (int i = first; i < n && i < first + detail; i++)
        printf("      %-4s slot %d  %9.3f .. %9.3f ms\n", names[sp[i].kind], sp[i].slot, sp[i].start_ms - t0, sp[i].end_ms - t0);
    free(k);
}

/* A Maxwell problem's six components (the rest the library makes: materials, CPML states); NULL for heat. */
static pyr_field_t *g_maxwell[6];

static pyr_status_t timed_run(pyr_device_t *gpu, pyr_plan_t *plan, pyr_field_t *f, int serial, pass_clock_t *c)
{
    memset(c, 0, sizeof *c);
    c->gpu = gpu;
    pyr_cuda_set_serial(gpu, serial);
    pyr_hooks_t hooks = {.progress = pass_clock_hook, .user = c};
    pyr_status_t st;
    if (g_maxwell[0]) {
        const int nf = pyr_scheme_of(PYR_EQ_MAXWELL)->nfields;
        pyr_field_t *fields[PYR_MAX_FIELDS] = {NULL};
        for (int k = 0; k < 6; k++) fields[k] = g_maxwell[k];
        st = pyr_execute_fields(plan, fields, nf, &hooks, NULL);
    } else {
        st = pyr_execute(plan, f, &hooks, NULL);
    }
    pyr_cuda_set_serial(gpu, 0);
    return st;
}

int main(int argc, char **argv)
{
    int cpml = -1; /* >= 0: Maxwell with that many CPML cells on every face */
    int poisson = 0;  /* 1: Poisson's Jacobi sweeps, 2: Chebyshev's (a sine f the library makes) */
    if (argc > 2 && !strcmp(argv[1], "--maxwell")) {
        cpml = atoi(argv[2]);
        argv += 2;
        argc -= 2;
    } else if (argc > 2 && !strcmp(argv[1], "--poisson")) {
        if (strcmp(argv[2], "jacobi") && strcmp(argv[2], "chebyshev")) {
            fprintf(stderr, "--poisson %s: use jacobi or chebyshev\n", argv[2]);
            return 2;
        }
        poisson = strcmp(argv[2], "chebyshev") ? 1 : 2;
        argv += 2;
        argc -= 2;
    }
    if (argc < 7) {
        fprintf(stderr, "usage: bench_stages [--maxwell CPML_CELLS | --poisson jacobi|chebyshev] DIMS N float|double strips|blocks|slabs|skewed|segments HEIGHTS BUDGET_MIB "
                        "[SLOTS] [PASSES]\n");
        return 2;
    }
    if (pyr_gpu_count() == 0) {
        printf("no usable GPU\n");
        return 77;
    }
    bench_wisdom_import();
    /* held for its hooks (cuda_api.h): serial mode, the timeline */
    pyr_device_t *gpu = NULL;
    if (pyr_device_acquire(PYR_BACKEND_CUDA, 0, &gpu) != PYR_OK) {
        fprintf(stderr, "GPU 0: %s\n", pyr_last_error());
        return 1;
    }
    int dims = atoi(argv[1]);
    int64_t n = atoll(argv[2]);
    pyr_precision_t prec = !strcmp(argv[3], "double") ? PYR_DOUBLE : PYR_FLOAT;
    const char *dn = argv[4];
    pyr_decomp_t decomp = PYR_DECOMP_BLOCKS;
    if (!pyr_decomp_from_name(dn, 0, &decomp)) {
        fprintf(stderr, "decomposition %s: use segments, strips, blocks, slabs or skewed\n", dn);
        return 2;
    }
    uint64_t budget = (uint64_t)atoll(argv[6]) << 20;
    int slots = argc > 7 ? atoi(argv[7]) : 0;
    int passes = argc > 8 ? atoi(argv[8]) : 4;
    if (passes < 2) passes = 2;
    /* PYR_TIMELINE=N: also print the timeline summary and the first N operations of a pass */
    const char *tl_env = getenv("PYR_TIMELINE");
    int timeline = tl_env && *tl_env ? atoi(tl_env) : 0;
    if (tl_env && *tl_env && timeline <= 0) timeline = 1;

    pyr_problem_t p;
    pyr_problem_default(&p);
    p.dims = dims;
    for (int a = 0; a < 3; a++) p.n[a] = a < dims ? n : 1;
    p.precision = prec;
    p.init = PYR_INIT_RANDOM;
    double h0 = 1.0 / (double)(n - 1);
    p.heat.dt = 0.4 * h0 * h0 / dims;
    p.steps = 1;
    if (poisson) {
        p.equation = PYR_EQ_POISSON;
        p.poisson.rhs = PYR_RHS_SINE;
        p.poisson.iteration = poisson == 2 ? PYR_ITER_CHEBYSHEV : PYR_ITER_JACOBI;
    }
    if (cpml >= 0) {
        /* an empty grid with a point source and, where asked, CPML on every face */
        p.equation = PYR_EQ_MAXWELL;
        p.init = PYR_INIT_ZERO;
        for (int a = 0; a < dims; a++) p.length[a] = (double)(n - 1) / 20.0;
        p.maxwell.courant = 0.5;
        p.maxwell.cpml_cells = cpml;
        p.maxwell.cpml_faces = cpml > 0 ? (dims == 2 ? 0xf : 0x3f) : 0;
        p.maxwell.nsources = 1;
        pyr_source_t *src = &p.maxwell.sources[0];
        for (int a = 0; a < 3; a++) src->node[a] = src->node_end[a] = a < dims ? n / 3 : 0;
        src->component = PYR_EZ;
        src->waveform = PYR_WAVE_RICKER;
        src->amplitude = 1;
        src->frequency = 2;
        src->delay = 0.6;
        for (int k = 0; k < 6; k++)
            if (pyr_field_alloc_zero(p.dims, p.n, p.precision, &g_maxwell[k]) != PYR_OK) {
                fprintf(stderr, "%s\n", pyr_last_error());
                return 1;
            }
    }
    pyr_field_t *f = NULL;
    if (cpml < 0 && (pyr_field_create(&p, &f) != PYR_OK || pyr_field_init(f, &p) != PYR_OK)) {
        fprintf(stderr, "%s\n", pyr_last_error());
        return 1;
    }
    printf("%dD %s %s%lld nodes per axis, %s, budget %s MiB, %d passes per run (first untimed); times per pass in ms\n", dims,
           argv[3], poisson == 2 ? "Poisson (Chebyshev), " : poisson ? "Poisson (Jacobi), " : cpml < 0 ? "heat, " : cpml ? "Maxwell with CPML, " : "Maxwell, ", (long long)n, dn, argv[6], passes);
    printf("(up .. down: each operation alone, dn.band: the part of down into band staging buffers; pass: overlapped;\n"
           " iss.up/iss.down: host time inside the upload/download calls of the overlapped run - large values mean the copy\n"
           " call blocked its caller; m.*: the model)\n");
    printf("%6s %5s %9s | %8s %8s %8s %8s %8s %8s %8s %8s | %8s %8s %8s %8s %8s | %9s %9s\n", "height", "slots", "pieces", "up", "copy",
           "comp", "down", "dn.band", "pass", "iss.up", "iss.down", "m.up", "m.comp", "m.down", "m.host", "m.pass", "G/s meas", "G/s model");
    char list[256];
    snprintf(list, sizeof list, "%s", argv[5]);
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        int64_t h = atoll(tok);
        p.steps = (int64_t)passes * h;
        pyr_options_t o;
        pyr_options_default(&o);
        o.backend = PYR_BACKEND_CUDA;
        o.method = PYR_METHOD_PYRAMID;
        o.decomposition = decomp;
        o.height = h;
        o.memory = budget;
        o.slots = slots;
        pyr_plan_t *plan = NULL;
        if (pyr_plan_create(&p, &o, &plan) != PYR_OK) {
            printf("%6lld  %s\n", (long long)h, pyr_last_error());
            continue;
        }
        pyr_plan_info_t info;
        pyr_plan_get_info(plan, &info);
        pass_clock_t ov, se;
        pyr_status_t st = timed_run(gpu, plan, f, 0, &ov);
        if (st == PYR_OK) st = timed_run(gpu, plan, f, 1, &se);
        /* a third run, overlapped, with the timeline on (its events cost a little) */
        const int cap = 1 << 16;
        pyr_cuda_span_t *spans = timeline ? malloc(cap * sizeof *spans) : NULL;
        int nspans = 0;
        if (spans && st == PYR_OK) {
            pass_clock_t tl;
            pyr_cuda_timeline_start(gpu, cap);
            st = timed_run(gpu, plan, f, 0, &tl);
            nspans = pyr_cuda_timeline_take(gpu, spans, cap);
        }
        pyr_model_prediction_t pr;
        if (st == PYR_OK) st = pyr_model_predict_pass(plan, pyr_plan_model(plan), pyr_plan_model_form(plan), h, &pr);
        if (st != PYR_OK) {
            printf("%6lld  failed: %s\n", (long long)h, pyr_last_error());
            pyr_plan_destroy(&plan);
            continue;
        }
        double k = 1e3 / (double)(passes - 1);
        double up = (se.at_last.upload_s - se.at_first.upload_s) * k, cp = (se.at_last.copy_s - se.at_first.copy_s) * k;
        double comp = (se.at_last.compute_s - se.at_first.compute_s) * k, down = (se.at_last.download_s - se.at_first.download_s) * k;
        double band = (se.at_last.download_band_s - se.at_first.download_band_s) * k;
        double pass = (ov.t_last - ov.t_first) * k;
        double iss_up = (ov.at_last.issue_upload_s - ov.at_first.issue_upload_s) * k;
        double iss_down = (ov.at_last.issue_download_s - ov.at_first.issue_download_s) * k;
        double cells = (double)pyr_problem_interior(&p) * (double)h;
        char pieces[32];
        snprintf(pieces, sizeof pieces, "%lldx%lldx%lld", (long long)info.pieces[0], (long long)info.pieces[1], (long long)info.pieces[2]);
        printf("%6lld %5d %9s | %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f | %8.2f %8.2f %8.2f %8.2f %8.2f | %9.1f %9.1f\n", (long long)h,
               info.slots, pieces, up, cp, comp, down, band, pass, iss_up, iss_down, pr.upload * 1e3, pr.compute * 1e3, pr.download * 1e3, pr.host * 1e3, pr.seconds * 1e3,
               cells / (pass * 1e-3) * 1e-9, cells / pr.seconds * 1e-9);
        if (dims == 3)
            printf("    3D fused launches per pass: %.1f streaming z, %.1f streaming y (saving a halo: %.1f, %.1f; filling: %.1f, %.1f)\n",
                   (double)(se.at_last.fused3d_z - se.at_first.fused3d_z) / (double)(passes - 1),
                   (double)(se.at_last.fused3d_y - se.at_first.fused3d_y) / (double)(passes - 1),
                   (double)(se.at_last.saves3d_z - se.at_first.saves3d_z) / (double)(passes - 1),
                   (double)(se.at_last.saves3d_y - se.at_first.saves3d_y) / (double)(passes - 1),
                   (double)(se.at_last.fills3d_z - se.at_first.fills3d_z) / (double)(passes - 1),
                   (double)(se.at_last.fills3d_y - se.at_first.fills3d_y) / (double)(passes - 1));
        if (nspans) timeline_report(spans, nspans, passes, timeline);
        free(spans);
        fflush(stdout);
        pyr_plan_destroy(&plan);
    }
    pyr_field_destroy(&f);
    for (int k = 0; k < 6; k++) pyr_field_destroy(&g_maxwell[k]);
    pyr_device_release(gpu);
    return 0;
}
