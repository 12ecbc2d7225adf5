/* Runs over the ranks of a transport (multi/ranks.h): the part of
 * pyr_execute_mpi and pyr_write_parts_mpi that is not MPI.  libpyrgrid_mpi
 * (multi/mpi.c) makes the transport of MPI calls and reaches these through
 * pyr_private_ranks; every step here is collective over the transport and
 * agrees on failures before the ranks go on together. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/field.h"
#include "io/atomic.h"
#include "io/npy_part.h"
#include "multi/parts.h"
#include "multi/ranks.h"
#include "pyrgrid_output.h"
#include "schemes/maxwell.h"
#include "schemes/scheme.h"

/* Every rank's status agreed: PYR_OK, or the lowest failing rank's status
 * with its message ("rank 2: ..."), as pyr_mpi_agree. */
pyr_status_t pyr_ranks_agree(pyr_transport_t *t, pyr_status_t mine)
{
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", mine != PYR_OK ? pyr_last_error() : "");
    pyr_status_t st = PYR_OK;
    int who = -1;
    PYR_TRY(t->agree(t, mine, msg, sizeof msg, &st, &who));
    if (who < 0) return PYR_OK;
    if (t->size > 1 && strncmp(msg, "rank ", 5)) return pyr_fail(st, "rank %d: %s", who, msg);
    return pyr_fail(st, "%s", msg);
}

static pyr_status_t agree(pyr_transport_t *t, pyr_status_t mine) { return pyr_ranks_agree(t, mine); }

/* The monitors' transforms of a run over the ranks, made whole on every rank.  Each node's are
 * summed over the steps by the one part that owns it (the record hook), in the order one process
 * sums them, and stored into that rank's spectra only; so no sum over the ranks is made (it would
 * depend on their order, and turn a -0 into +0): each rank sends the values of the nodes its parts
 * own, as they are, and every rank puts them in place.  The result is one process's bits. */
static pyr_status_t share_spectra(pyr_parts_t *P, pyr_transport_t *t, pyr_spectra_t *s)
{
    pyr_parts_info_t pi;
    pyr_parts_get_info(P, &pi);
    pyr_status_t st = PYR_OK;
    for (int m = 0; m < pyr_spectra_count(s) && st == PYR_OK; m++) {
        pyr_monitor_info_t mi;
        st = pyr_spectra_info(s, m, &mi);
        if (st != PYR_OK) break;
        const int64_t nn = mi.nnodes, per = (int64_t)mi.ncomponents * mi.nfreq; /* values of a node, (component, frequency) */
        const int64_t nx = mi.hi[0] - mi.lo[0] + 1, ny = mi.hi[1] - mi.lo[1] + 1;
        double *re = malloc((size_t)(per * nn + 1) * sizeof *re), *im = malloc((size_t)(per * nn + 1) * sizeof *im);
        double *buf = malloc((size_t)(2 * per * nn + 1) * sizeof *buf);
        int *owner = malloc((size_t)(nn + 1) * sizeof *owner);
        unsigned char *all = malloc((size_t)(mi.ncomponents * nn + 1));
        int64_t *count = calloc((size_t)t->size, sizeof *count);
        if (!re || !im || !buf || !owner || !all || !count) st = pyr_fail(PYR_ERR_NOMEM, "out of host memory for monitor %s over the ranks", mi.name);
        /* each node's rank: that of the part whose box holds it (every rank finds the same) */
        for (int64_t k = 0; k < nn && st == PYR_OK; k++) {
            const int64_t at[3] = {mi.lo[0] + k % nx, mi.lo[1] + k / nx % ny, mi.lo[2] + k / (nx * ny)};
            owner[k] = -1;
            for (int q = 0; q < pi.nparts && owner[k] < 0; q++) {
                pyr_box_t own;
                int r = -1;
                pyr_parts_part(P, q, &own, NULL, &r);
                int in = 1;
                for (int a = 0; a < 3; a++) in &= at[a] >= own.lo[a] && at[a] < own.hi[a];
                if (in) owner[k] = r;
            }
            if (owner[k] < 0 || owner[k] >= t->size)
                st = pyr_fail(PYR_ERR_INTERNAL, "monitor %s: node (%lld, %lld, %lld) lies on no rank's part", mi.name, (long long)at[0],
                              (long long)at[1], (long long)at[2]);
            else count[owner[k]]++;
        }
        if (st == PYR_OK) st = pyr_spectra_dft(s, m, re, im);
        st = agree(t, st);
        /* rank r's nodes, in the monitor's order, each with its values of every component and frequency */
        for (int r = 0; r < t->size && st == PYR_OK; r++) {
            if (!count[r]) continue;
            int64_t j = 0;
            if (r == t->rank)
                for (int64_t k = 0; k < nn; k++) {
                    if (owner[k] != r) continue;
                    for (int64_t v = 0; v < per; v++) buf[j++] = re[v * nn + k], buf[j++] = im[v * nn + k];
                }
            st = agree(t, t->broadcast(t, buf, (size_t)(2 * per * count[r]) * sizeof *buf, r));
            if (st != PYR_OK || r == t->rank) continue;
            j = 0;
            for (int64_t k = 0; k < nn; k++) {
                if (owner[k] != r) continue;
                for (int64_t v = 0; v < per; v++) re[v * nn + k] = buf[j++], im[v * nn + k] = buf[j++];
            }
        }
        /* the steps summed: every rank that ran the monitor's nodes says the same count */
        uint64_t steps = (uint64_t)(mi.steps > 0 ? mi.steps : 0);
        if (st == PYR_OK) st = agree(t, t->reduce_u64(t, &steps, 1));
        /* back into the spectra as they are (x 1: the store scales by dt, which the values hold already) */
        if (st == PYR_OK) {
            memset(all, 1, (size_t)(mi.ncomponents * nn));
            pyr_maxwell_spectra_store(s, m, re, im, all, 1.0, (int64_t)steps);
        }
        free(re);
        free(im);
        free(buf);
        free(owner);
        free(all);
        free(count);
    }
    return st;
}

static pyr_status_t ranks_execute(const pyr_problem_t *problem, const pyr_options_t *options, pyr_transport_t *t, const pyr_ranks_env_t *env,
                                  const pyr_hooks_t *hooks, pyr_field_t **parts, int nfields, pyr_ranks_info_t *info)
{
    if (info) memset(info, 0, sizeof *info);
    for (int f = 0; parts && f < nfields; f++) parts[f] = NULL;
    if (!problem || !parts || !t || !env)
        return pyr_fail(PYR_ERR_ARG, "pyr_execute_mpi: a problem and a place for the parts are required");
    const pyr_scheme_t *scheme = pyr_scheme_of(problem->equation);
    if (scheme && nfields < scheme->nfields)
        return pyr_fail(PYR_ERR_ARG, "pyr_execute_mpi_fields: the %s scheme has %d fields; room for %d given", scheme->name, scheme->nfields, nfields);
    pyr_options_t opt;
    if (options) opt = *options;
    else pyr_options_default(&opt);
    /* one GPU per rank of a host, unless the options name them; the ranks of
     * a host share its cores (OpenMP threads of several ranks on the same
     * cores, spinning while MPI polls, run many times slower) */
    const int ln = env->local_size > 0 ? env->local_size : 1;
    if (!opt.devices[0] && opt.device == 0 && opt.backend != PYR_BACKEND_CPU && pyr_gpu_count() > 0) opt.device = env->local_rank % pyr_gpu_count();
    if (opt.threads == 0 && ln > 1) opt.threads = omp_get_max_threads() / ln > 1 ? omp_get_max_threads() / ln : 1;
    pyr_status_t st = PYR_OK;
    if (opt.devices[0]) {
        int devs[PYR_PARTS_MAX_DEVICES], n = 0;
        st = pyr_parts_parse_devices(opt.devices, devs, PYR_PARTS_MAX_DEVICES, &n);
        if (st == PYR_OK && (n > 1 || n == -1) && !env->serialized)
            st = pyr_fail(PYR_ERR_CONFIG, "run.devices = %s: several devices per rank need MPI_THREAD_SERIALIZED (MPI was initialised with "
                          "less); use MPI_Init_thread with MPI_THREAD_SERIALIZED, or one device per rank", opt.devices);
    }
    st = agree(t, st);
    pyr_parts_t *P = NULL;
    pyr_run_info_t run;
    memset(&run, 0, sizeof run);
    if (st == PYR_OK) st = pyr_parts_create(problem, &opt, t, &P);
    if (st == PYR_OK) st = pyr_parts_init(P);
    if (st == PYR_OK) st = pyr_parts_run(P, hooks, &run);
    /* every rank returns the same status (a stop asked for on one rank stops all of them) */
    if (P) st = agree(t, st);
    if (st == PYR_OK && t->size > 1 && problem->equation == PYR_EQ_MAXWELL && problem->maxwell.spectra)
        st = share_spectra(P, t, problem->maxwell.spectra);
    pyr_field_t *out[PYR_MAX_FIELDS] = {NULL};
    pyr_box_t box = {{0, 0, 0}, {0, 0, 0}};
    if (st == PYR_OK) {
        box = pyr_parts_process_box(P);
        const unsigned used = scheme->fields_used(problem);
        int64_t n[3];
        for (int a = 0; a < 3; a++) n[a] = pyr_box_extent(&box, a);
        for (int i = 0; i < scheme->nfields && st == PYR_OK; i++) {
            /* the caller's state fields (not inputs, not the library's own auxiliaries), through the
             * field allocator: pyr_field_destroy frees what its header says it owns */
            const pyr_field_role_t role = scheme->field[i].role;
            if (!((used >> i) & 1) || (role != PYR_FIELD_PINGPONG && role != PYR_FIELD_INPLACE)) continue;
            if (pyr_field_alloc(problem->dims, n, problem->precision, &out[i]) != PYR_OK)
                st = pyr_fail(PYR_ERR_NOMEM, "out of host memory for this rank's part of the result");
            if (st == PYR_OK) st = pyr_parts_copy_out(P, i, &box, out[i]->data);
        }
        st = agree(t, st);
    }
    if (st == PYR_OK) {
        for (int i = 0; i < scheme->nfields; i++) { /* (nfields >= the scheme's, checked above) */
            parts[i] = out[i];
            out[i] = NULL;
        }
        if (info) {
            info->rank = t->rank;
            info->ranks = t->size;
            for (int a = 0; a < 3; a++) info->lo[a] = box.lo[a], info->hi[a] = box.hi[a];
            info->run = run;
            pyr_parts_describe(P, info->partition, sizeof info->partition);
            pyr_parts_info_t pi;
            pyr_parts_get_info(P, &pi);
            for (int a = 0; a < 3; a++) info->parts_per_axis[a] = pi.count[a];
        }
    }
    for (int i = 0; i < PYR_MAX_FIELDS; i++) pyr_field_destroy(&out[i]);
    pyr_parts_destroy(&P);
    return st;
}

/* Every rank's box on rank 0 (all[r * 6 ...]: lo then hi), through the
 * transport's point-to-point messages. */
static pyr_status_t gather_boxes(pyr_transport_t *t, const int64_t mine[6], int64_t *all)
{
    enum { TAG = 31000 }; /* no halo is in flight once a run has returned */
    pyr_status_t st = PYR_OK;
    if (t->rank == 0) {
        memcpy(all, mine, 6 * sizeof *mine);
        pyr_wire_t *w = t->size > 1 ? calloc((size_t)t->size - 1, sizeof *w) : NULL;
        if (t->size > 1 && !w) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
        for (int r = 1; r < t->size; r++) w[r - 1] = (pyr_wire_t){r, TAG, all + 6 * r, 6 * sizeof *all};
        st = t->start(t, NULL, 0, w, t->size - 1);
        if (st == PYR_OK) st = t->finish(t);
        free(w);
    } else {
        pyr_wire_t w = {0, TAG, (void *)mine, 6 * sizeof *mine};
        st = t->start(t, &w, 1, NULL, 0);
        if (st == PYR_OK) st = t->finish(t);
    }
    return st;
}

static pyr_status_t ranks_write_parts(const char *path, const pyr_field_t *part, const int64_t lo[3], const int64_t hi[3], pyr_transport_t *t)
{
    pyr_status_t st = PYR_OK;
    if (!path || !part || !lo || !hi || !part->data) st = pyr_fail(PYR_ERR_ARG, "pyr_write_parts_mpi: a path, a part and its info are required");
    const int rank = t->rank, size = t->size;
    char ppath[PYR_PATH_MAX + 32], ipath[PYR_PATH_MAX + 32];
    if (st == PYR_OK) pyr_npy_part_names(path, rank, ppath, sizeof ppath, ipath, sizeof ipath);
    /* every part under a temporary name first, renamed once all are written */
    pyr_atomic_stage_t stage;
    pyr_atomic_stage_begin(&stage);
    if (st == PYR_OK) {
        int64_t shape[3];
        for (int d = 0; d < part->dims; d++) shape[d] = part->n[part->dims - 1 - d];
        st = pyr_npy_write(ppath, part->dims, shape, part->precision, part->data);
    }
    st = agree(t, st);
    if (st == PYR_OK) st = pyr_atomic_stage_commit(&stage);
    pyr_atomic_stage_abort(&stage);
    st = agree(t, st);
    if (st != PYR_OK) return st;
    /* the index: every rank's box, in NumPy order, gathered on rank 0 */
    int64_t mine[6], *all = rank == 0 ? malloc((size_t)size * sizeof mine) : NULL;
    for (int a = 0; a < 3; a++) mine[a] = lo[a], mine[3 + a] = hi[a];
    if (rank == 0 && !all) st = pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    st = agree(t, st);
    if (st == PYR_OK) st = agree(t, gather_boxes(t, mine, all));
    if (rank == 0 && st == PYR_OK) {
        pyr_npy_index_t x;
        memset(&x, 0, sizeof x);
        x.dims = part->dims;
        x.precision = part->precision;
        x.nparts = size;
        x.parts = calloc((size_t)size, sizeof *x.parts);
        int64_t n[3] = {0, 0, 0};
        if (!x.parts) st = pyr_fail(PYR_ERR_NOMEM, "out of host memory");
        for (int r = 0; r < size && st == PYR_OK; r++) {
            char pr[PYR_PATH_MAX + 32];
            pyr_npy_part_names(path, r, pr, sizeof pr, NULL, 0);
            const char *slash = strrchr(pr, '/');
            snprintf(x.parts[r].file, sizeof x.parts[r].file, "%.4000s", slash ? slash + 1 : pr);
            for (int d = 0; d < x.dims; d++) {
                const int a = x.dims - 1 - d; /* NumPy order: slowest axis first */
                x.parts[r].offset[d] = all[r * 6 + a];
                x.parts[r].shape[d] = all[r * 6 + 3 + a] - all[r * 6 + a];
                if (all[r * 6 + 3 + a] > n[a]) n[a] = all[r * 6 + 3 + a];
            }
        }
        for (int d = 0; d < x.dims; d++) x.shape[d] = n[x.dims - 1 - d];
        if (st == PYR_OK) st = pyr_npy_index_write(ipath, &x);
        free(x.parts);
    }
    free(all);
    return agree(t, st);
}

/* libpyrgrid_mpi's table, handed over when that library is loaded (one per process) */
static const pyr_ranks_mpi_t *attached;

static void attach_mpi(const pyr_ranks_mpi_t *m) { attached = m && m->size == sizeof *m ? m : NULL; }
static const pyr_ranks_mpi_t *mpi_table(void) { return attached; }

static pyr_status_t field_zero(const pyr_problem_t *problem, pyr_field_t **out)
{
    *out = NULL;
    PYR_TRY(pyr_problem_validate(problem));
    return pyr_field_alloc_zero(problem->dims, problem->n, problem->precision, out);
}

/* Only where pyr_field_init_state would make the field as pyr_field_init_part makes the whole grid:
 * a scheme without an initial state of its own, its first field, a built-in kind. */
static pyr_status_t field_initial(const pyr_problem_t *problem, int i, pyr_field_t **out)
{
    *out = NULL;
    PYR_TRY(pyr_problem_validate(problem));
    const pyr_scheme_t *scheme = pyr_scheme_of(problem->equation);
    const pyr_recipe_kind_t kind = pyr_recipe_of_init(problem->init);
    if (!scheme || scheme->init_state || i != 0 || kind == PYR_RECIPE_NONE) return PYR_OK;
    const pyr_recipe_t r = {kind, problem->dims, {problem->n[0], problem->n[1], problem->n[2]}, {0, 0, 0}, problem->seed};
    const pyr_status_t st = pyr_field_alloc_recipe(&r, problem->precision, problem->n, out);
    /* out of memory: left to the caller's pyr_field_create, whose message says what the grid needs and what would fit */
    if (st == PYR_ERR_NOMEM) pyr_clear_error();
    return st == PYR_ERR_NOMEM ? PYR_OK : st;
}

static const pyr_ranks_core_t core = {
    sizeof(pyr_ranks_core_t), PYR_VERSION_STRING, ranks_execute, ranks_write_parts, pyr_ranks_write_one, attach_mpi, mpi_table, pyr_ranks_set_h5,
    field_zero, field_initial,
};

const pyr_ranks_core_t *pyr_private_ranks(void) { return &core; }
