/* Line Gauss–Seidel, side by side in one run: sequential lexicographic CPU,
 * red–black CPU (all cores), red–black CUDA, on test system 1 (double), for
 * N = M = 128, 512, 1024, 4096 by default.
 *
 *   bench_lgs [--sizes 128,512,1024,4096] [--seconds 1.0] [--max-iters 20000]
 *             [--threads T] [--no-seq] [--no-cpu] [--no-cuda] [--csv FILE]
 *
 * Each measurement runs a fixed number of iterations chosen so that it lasts
 * about --seconds (after a short probe), with no residual checks in between;
 * the time per iteration excludes setup (factorisation, upload).  For CUDA the
 * effective bandwidth counts the bytes one iteration must move with ω = 1:
 * 5 prepared coefficient arrays read (40 B/unknown), the iterate written once
 * (8 B) and the neighbour rows read once (8 B): 56 B per unknown, against
 * the H200's ~4.1 TB/s measured copy bandwidth (MEASURED.md). */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pyrgrid.h"

#define HBM_TBS 4.1
#define BYTES_PER_UNKNOWN 56.0

typedef struct {
    double per_it; /* seconds per iteration; <0: not run */
    int64_t iters;
    double rel;
    char note[160];
} meas_t;

static meas_t measure(const pyr_lgs_system_t *sys, pyr_lgs_ordering_t ord, pyr_backend_kind_t be, int threads,
                      double seconds, int64_t max_iters)
{
    meas_t r = {-1.0, 0, 0, ""};
    size_t count = (size_t)sys->n * (size_t)sys->m;
    double *y = calloc(count, sizeof *y);
    if (!y) {
        snprintf(r.note, sizeof r.note, "out of memory");
        return r;
    }
    pyr_lgs_options_t o;
    pyr_lgs_options_default(&o);
    o.ordering = ord;
    o.backend = be;
    o.threads = threads;
    o.tolerance = 0;
    o.stagnation_window = 0;
    int64_t iters = 2;
    for (int pass = 0; pass < 2; pass++) {
        memset(y, 0, count * sizeof *y);
        o.max_iterations = iters;
        o.check_every = iters;
        pyr_lgs_result_t *res = NULL;
        pyr_status_t st = pyr_lgs_solve(sys, &o, y, &res);
        if (st != PYR_OK) {
            snprintf(r.note, sizeof r.note, "%s: %.120s", pyr_status_name(st), pyr_last_error());
            pyr_lgs_result_destroy(&res);
            free(y);
            return r;
        }
        double per = res->iterate_seconds / (double)res->iterations;
        r.per_it = per;
        r.iters = res->iterations;
        r.rel = res->rel_residual;
        pyr_lgs_result_destroy(&res);
        if (pass == 0) {
            double want = seconds / (per > 0 ? per : 1e-9);
            iters = want < 3 ? 3 : want > (double)max_iters ? max_iters : (int64_t)want;
        }
    }
    free(y);
    return r;
}

static void fmt_ms(char *buf, size_t n, const meas_t *m)
{
    if (m->per_it < 0)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.4g", m->per_it * 1e3);
}

static void fmt_ratio(char *buf, size_t n, const meas_t *a, const meas_t *b)
{
    if (a->per_it < 0 || b->per_it < 0)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.1fx", a->per_it / b->per_it);
}

int main(int argc, char **argv)
{
    int64_t sizes[16] = {128, 512, 1024, 4096};
    int nsizes = 4, threads = 0, do_seq = 1, do_cpu = 1, do_cuda = 1;
    double seconds = 1.0;
    int64_t max_iters = 20000;
    const char *csv = NULL;
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--sizes") && a + 1 < argc) {
            nsizes = 0;
            for (char *tok = strtok(argv[++a], ","); tok && nsizes < 16; tok = strtok(NULL, ","))
                sizes[nsizes++] = atoll(tok);
        } else if (!strcmp(argv[a], "--seconds") && a + 1 < argc) {
            seconds = atof(argv[++a]);
        } else if (!strcmp(argv[a], "--max-iters") && a + 1 < argc) {
            max_iters = atoll(argv[++a]);
        } else if (!strcmp(argv[a], "--threads") && a + 1 < argc) {
            threads = atoi(argv[++a]);
        } else if (!strcmp(argv[a], "--no-seq")) {
            do_seq = 0;
        } else if (!strcmp(argv[a], "--no-cpu")) {
            do_cpu = 0;
        } else if (!strcmp(argv[a], "--no-cuda")) {
            do_cuda = 0;
        } else if (!strcmp(argv[a], "--csv") && a + 1 < argc) {
            csv = argv[++a];
        } else {
            fprintf(stderr,
                    "usage: %s [--sizes 128,512,1024,4096] [--seconds 1.0] [--max-iters 20000] [--threads T] "
                    "[--no-seq] [--no-cpu] [--no-cuda] [--csv FILE]\n",
                    argv[0]);
            return 2;
        }
    }
    int nthreads = threads > 0 ? threads : omp_get_max_threads();
    if (do_cuda && pyr_lgs_cuda_usable() != PYR_OK) {
        printf("# CUDA not measured: %s\n", pyr_last_error());
        do_cuda = 0;
    }
    printf("# line Gauss-Seidel on test system 1 (double), time per iteration in ms; CPU red-black on %d threads\n",
           nthreads);
    printf("# CUDA effective bandwidth counts %.0f B per unknown per iteration, vs %.1f TB/s\n", BYTES_PER_UNKNOWN,
           HBM_TBS);
    printf("%6s | %10s %10s %10s | %9s %9s %9s | %9s %8s %6s\n", "N=M", "seq", "rb-cpu", "rb-cuda", "cpu/seq",
           "cuda/seq", "cuda/cpu", "GB/s", "%HBM", "iters");
    FILE *out = csv ? fopen(csv, "w") : NULL;
    if (out) fprintf(out, "n,seq_ms,rb_cpu_ms,rb_cuda_ms,cuda_gbs,cuda_iters\n");
    for (int s = 0; s < nsizes; s++) {
        int64_t n = sizes[s];
        pyr_lgs_system_t *sys = NULL;
        if (pyr_lgs_system_test1(n, n, &sys) != PYR_OK) {
            printf("%6lld | %s\n", (long long)n, pyr_last_error());
            continue;
        }
        meas_t none = {-1.0, 0, 0, ""};
        meas_t seq = do_seq ? measure(sys, PYR_LGS_LEXICOGRAPHIC, PYR_BACKEND_CPU, 1, seconds, max_iters) : none;
        meas_t cpu = do_cpu ? measure(sys, PYR_LGS_REDBLACK, PYR_BACKEND_CPU, threads, seconds, max_iters) : none;
        meas_t gpu = do_cuda ? measure(sys, PYR_LGS_REDBLACK, PYR_BACKEND_CUDA, 0, seconds, max_iters) : none;
        char a[32], b[32], c[32], r1[32], r2[32], r3[32], bw[32] = "-", pc[32] = "-";
        fmt_ms(a, sizeof a, &seq);
        fmt_ms(b, sizeof b, &cpu);
        fmt_ms(c, sizeof c, &gpu);
        fmt_ratio(r1, sizeof r1, &seq, &cpu);
        fmt_ratio(r2, sizeof r2, &seq, &gpu);
        fmt_ratio(r3, sizeof r3, &cpu, &gpu);
        double gbs = 0;
        if (gpu.per_it > 0) {
            gbs = BYTES_PER_UNKNOWN * (double)n * (double)n / gpu.per_it / 1e9;
            snprintf(bw, sizeof bw, "%.0f", gbs);
            snprintf(pc, sizeof pc, "%.0f%%", 100.0 * gbs / (HBM_TBS * 1e3));
        }
        printf("%6lld | %10s %10s %10s | %9s %9s %9s | %9s %8s %6lld\n", (long long)n, a, b, c, r1, r2, r3, bw, pc,
               (long long)gpu.iters);
        const meas_t *all[3] = {&seq, &cpu, &gpu};
        for (int k = 0; k < 3; k++)
            if (all[k]->note[0]) printf("#   %s\n", all[k]->note);
        if (out)
            fprintf(out, "%lld,%.6g,%.6g,%.6g,%.6g,%lld\n", (long long)n, seq.per_it * 1e3, cpu.per_it * 1e3,
                    gpu.per_it * 1e3, gbs, (long long)gpu.iters);
        fflush(stdout);
        pyr_lgs_system_destroy(&sys);
    }
    if (out) fclose(out);
    return 0;
}
