/* MPI ranks (include/pyrgrid_mpi.h): the transport of multi/parts.h over a
 * communicator, and the public functions that take one.  This file is
 * libpyrgrid_mpi (built only with MPI, PYR_HAVE_MPI): libpyrgrid never
 * includes mpi.h nor links MPI, so that one-process programs and Python map
 * none of it.  What an MPI run does besides MPI calls (the parts, the result's
 * boxes, the parts files) is the core's, reached through pyr_private_ranks
 * (multi/ranks.h): this library links only the public library and MPI.
 *
 * Everything is collective and every collective step agrees on failures
 * first (parts.h): a rank that failed says so where the others would
 * exchange halos, and all return its status and message.  Halos go as one
 * non-blocking message per pair of parts and exchange (MPI_Irecv and
 * MPI_Isend, all posted before any is waited for), packed from the host
 * fields; copies between this rank's own parts proceed while they travel. */
#ifdef PYR_HAVE_MPI
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "multi/mpi_internal.h"
#include "multi/parts.h"
#include "multi/ranks.h"
#include "pyrgrid_mpi.h"

#define CHUNK ((size_t)1 << 30) /* MPI counts are ints: larger messages go in pieces of 1 GiB */

typedef struct {
    MPI_Comm comm;
    MPI_Request *req;
    int nreq, cap;
} mpi_impl_t;

/* The core's table (multi/ranks.h), checked once: both libraries must come
 * from one build. */
static const pyr_ranks_core_t *core;

static pyr_status_t check_core(void)
{
    if (core) return PYR_OK;
    const pyr_ranks_core_t *c = pyr_private_ranks();
    if (!c || c->size != sizeof *c || strcmp(c->version, PYR_VERSION_STRING)) {
        return pyr_fail(PYR_ERR_INTERNAL, "libpyrgrid_mpi %s was loaded with a libpyrgrid of another build (%s); install the two from one build",
                        PYR_VERSION_STRING, c && c->version ? c->version : "?");
    }
    core = c;
    return PYR_OK;
}

static pyr_status_t mpi_failed(int rc, const char *what)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "error %d", rc);
    return pyr_fail(PYR_ERR_INTERNAL, "MPI: %s failed: %s", what, text);
}

#define MPI_TRY(call, what)                                                                                                              \
    do {                                                                                                                                 \
        int mpi_rc_ = (call);                                                                                                            \
        if (mpi_rc_ != MPI_SUCCESS) return mpi_failed(mpi_rc_, what);                                                                    \
    } while (0)

pyr_status_t pyr_mpi_agree_status(MPI_Comm comm, pyr_status_t mine, char *message, size_t size, pyr_status_t *status, int *who)
{
    int rank = 0;
    MPI_TRY(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
    int me = mine != PYR_OK ? rank : INT_MAX, low = INT_MAX;
    MPI_TRY(MPI_Allreduce(&me, &low, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce (status)");
    *who = -1;
    *status = PYR_OK;
    if (low == INT_MAX) return PYR_OK;
    struct {
        int status;
        char text[1024];
    } m;
    memset(&m, 0, sizeof m);
    if (rank == low) {
        m.status = (int)mine;
        snprintf(m.text, sizeof m.text, "%s", message);
    }
    MPI_TRY(MPI_Bcast(&m, (int)sizeof m, MPI_BYTE, low, comm), "MPI_Bcast (status)");
    *who = low;
    *status = (pyr_status_t)m.status;
    snprintf(message, size, "%s", m.text);
    return PYR_OK;
}

pyr_status_t pyr_mpi_agree(MPI_Comm comm, pyr_status_t mine)
{
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", mine != PYR_OK ? pyr_last_error() : "");
    pyr_status_t st = PYR_OK;
    int who = -1, size = 1;
    PYR_TRY(pyr_mpi_agree_status(comm, mine, msg, sizeof msg, &st, &who));
    MPI_Comm_size(comm, &size);
    if (who < 0) return PYR_OK;
    if (size > 1 && strncmp(msg, "rank ", 5)) return pyr_fail(st, "rank %d: %s", who, msg);
    return pyr_fail(st, "%s", msg);
}

/* ---------------------------------------------------------------- transport */

static MPI_Comm comm_of(pyr_transport_t *t) { return ((mpi_impl_t *)t->impl)->comm; }

static pyr_status_t t_agree(pyr_transport_t *t, pyr_status_t mine, char *message, size_t size, pyr_status_t *status, int *who)
{
    return pyr_mpi_agree_status(comm_of(t), mine, message, size, status, who);
}

static pyr_status_t t_reduce_u64(pyr_transport_t *t, uint64_t *v, int max)
{
    MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_UINT64_T, max ? MPI_MAX : MPI_MIN, comm_of(t)), "MPI_Allreduce");
    return PYR_OK;
}

static pyr_status_t t_broadcast(pyr_transport_t *t, void *data, size_t bytes, int root)
{
    for (size_t off = 0; off < bytes; off += CHUNK) {
        size_t n = bytes - off < CHUNK ? bytes - off : CHUNK;
        MPI_TRY(MPI_Bcast((char *)data + off, (int)n, MPI_BYTE, root, comm_of(t)), "MPI_Bcast");
    }
    return PYR_OK;
}

static pyr_status_t push_request(mpi_impl_t *m, MPI_Request **r)
{
    if (m->nreq == m->cap) {
        int cap = m->cap ? 2 * m->cap : 64;
        MPI_Request *g = realloc(m->req, (size_t)cap * sizeof *g);
        if (!g) return pyr_fail(PYR_ERR_NOMEM, "out of host memory for MPI requests");
        m->req = g;
        m->cap = cap;
    }
    *r = &m->req[m->nreq++];
    return PYR_OK;
}

static pyr_status_t t_start(pyr_transport_t *t, const pyr_wire_t *sends, int nsend, const pyr_wire_t *recvs, int nrecv)
{
    mpi_impl_t *m = t->impl;
    /* receives first, so that no send waits for its receive to be posted */
    for (int k = 0; k < nrecv + nsend; k++) {
        const pyr_wire_t *w = k < nrecv ? &recvs[k] : &sends[k - nrecv];
        for (size_t off = 0; off < w->bytes || (off == 0 && w->bytes == 0); off += CHUNK) {
            size_t n = w->bytes - off < CHUNK ? w->bytes - off : CHUNK;
            MPI_Request *r = NULL;
            PYR_TRY(push_request(m, &r));
            if (k < nrecv) MPI_TRY(MPI_Irecv((char *)w->data + off, (int)n, MPI_BYTE, w->peer, w->tag, m->comm, r), "MPI_Irecv (halo)");
            else MPI_TRY(MPI_Isend((char *)w->data + off, (int)n, MPI_BYTE, w->peer, w->tag, m->comm, r), "MPI_Isend (halo)");
            if (w->bytes == 0) break;
        }
    }
    return PYR_OK;
}

static pyr_status_t t_finish(pyr_transport_t *t)
{
    mpi_impl_t *m = t->impl;
    int n = m->nreq;
    m->nreq = 0;
    if (n) MPI_TRY(MPI_Waitall(n, m->req, MPI_STATUSES_IGNORE), "MPI_Waitall (halos)");
    return PYR_OK;
}

/* Every rank's box of one array into one file at once: a subarray file view
 * of the whole array after the header, and one collective write. */
static pyr_status_t t_write_box(pyr_transport_t *t, const char *path, int64_t offset, int dims, const int64_t whole[3], const int64_t lo[3],
                                const int64_t hi[3], size_t elem, const void *data)
{
    MPI_Comm c = comm_of(t);
    int sizes[3] = {1, 1, 1}, subs[3] = {1, 1, 1}, starts[3] = {0, 0, 0};
    int64_t count = 1;
    for (int d = 0; d < dims; d++) {
        const int a = dims - 1 - d; /* C order: the slowest axis first */
        if (whole[a] > INT_MAX) return pyr_fail(PYR_ERR_UNSUPPORTED, "%lld nodes along an axis are more than MPI-IO's counts hold; write the parts (--parts)", (long long)whole[a]);
        sizes[d] = (int)whole[a];
        subs[d] = (int)(hi[a] - lo[a]);
        starts[d] = (int)lo[a];
        count *= hi[a] - lo[a];
    }
    /* one plane of the slowest axis per write unit where the box has more values than an int counts */
    const int64_t plane = count / subs[0];
    if (plane > INT_MAX) return pyr_fail(PYR_ERR_UNSUPPORTED, "a part of %lld values per plane is more than MPI-IO's counts hold; write the parts (--parts)", (long long)plane);
    MPI_Datatype value = MPI_DATATYPE_NULL, view = MPI_DATATYPE_NULL, unit = MPI_DATATYPE_NULL;
    MPI_TRY(MPI_Type_contiguous((int)elem, MPI_BYTE, &value), "MPI_Type_contiguous");
    MPI_Type_commit(&value);
    int rc = MPI_Type_create_subarray(dims, sizes, subs, starts, MPI_ORDER_C, value, &view);
    if (rc == MPI_SUCCESS) rc = MPI_Type_commit(&view);
    const int big = count > INT_MAX;
    if (rc == MPI_SUCCESS && big) rc = MPI_Type_contiguous((int)plane, value, &unit);
    if (rc == MPI_SUCCESS && big) rc = MPI_Type_commit(&unit);
    if (rc != MPI_SUCCESS) {
        MPI_Type_free(&value);
        if (view != MPI_DATATYPE_NULL) MPI_Type_free(&view);
        return mpi_failed(rc, "MPI_Type_create_subarray");
    }
    /* the open is collective: the ranks agree on it before the collective steps that follow */
    MPI_File fh = MPI_FILE_NULL;
    rc = MPI_File_open(c, path, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    int opened = rc == MPI_SUCCESS, all = 0;
    char why[MPI_MAX_ERROR_STRING] = "";
    if (!opened) {
        int len = 0;
        if (MPI_Error_string(rc, why, &len) != MPI_SUCCESS) snprintf(why, sizeof why, "error %d", rc);
    }
    pyr_status_t st = PYR_OK;
    if (MPI_Allreduce(&opened, &all, 1, MPI_INT, MPI_MIN, c) != MPI_SUCCESS) all = 0;
    if (!opened)
        st = pyr_fail(PYR_ERR_IO, "this rank cannot open the temporary %s that rank 0 made (MPI_File_open: %s); every rank must see the "
                      "output's directory on a shared file system; without one, write the parts (pyrgrid run --parts) and join them "
                      "with pyrgrid assemble", path, why);
    else if (!all)
        st = pyr_fail(PYR_ERR_IO, "another rank cannot open %s", path);
    if (all) {
        rc = MPI_File_set_view(fh, (MPI_Offset)offset, value, view, "native", MPI_INFO_NULL);
        if (rc == MPI_SUCCESS) rc = big ? MPI_File_write_all(fh, data, subs[0], unit, MPI_STATUS_IGNORE)
                                        : MPI_File_write_all(fh, data, (int)count, value, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) st = mpi_failed(rc, "MPI_File_write_all");
    }
    if (opened) {
        rc = MPI_File_close(&fh);
        if (rc != MPI_SUCCESS && st == PYR_OK) st = mpi_failed(rc, "MPI_File_close");
    }
    if (unit != MPI_DATATYPE_NULL) MPI_Type_free(&unit);
    MPI_Type_free(&view);
    MPI_Type_free(&value);
    return st;
}

/* The link between ranks 0 and 1 (the model's latency and bandwidth):
 * ping-pongs of 8 bytes and of 1 MiB, a few milliseconds. */
static pyr_status_t calibrate(pyr_transport_t *t)
{
    MPI_Comm c = comm_of(t);
    double v[2] = {1e-5, 1e-9};
    if (t->size > 1 && t->rank < 2) {
        const size_t big = (size_t)1 << 20;
        char *buf = calloc(1, big);
        if (!buf) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
        const int other = 1 - t->rank, tag = 32000;
        double small = 0, large = 0;
        for (int pass = 0; pass < 2; pass++) {
            const size_t bytes = pass ? big : 8;
            const int reps = pass ? 4 : 20;
            MPI_Barrier(MPI_COMM_SELF);
            double t0 = MPI_Wtime();
            for (int i = 0; i < reps; i++) {
                if (t->rank == 0) {
                    MPI_Send(buf, (int)bytes, MPI_BYTE, other, tag, c);
                    MPI_Recv(buf, (int)bytes, MPI_BYTE, other, tag, c, MPI_STATUS_IGNORE);
                } else {
                    MPI_Recv(buf, (int)bytes, MPI_BYTE, other, tag, c, MPI_STATUS_IGNORE);
                    MPI_Send(buf, (int)bytes, MPI_BYTE, other, tag, c);
                }
            }
            double dt = (MPI_Wtime() - t0) / (2.0 * reps);
            if (pass) large = dt;
            else small = dt;
        }
        free(buf);
        v[0] = small > 0 ? small : 1e-6;
        v[1] = large > small ? (large - small) / (double)big : 1e-10;
    }
    MPI_TRY(MPI_Bcast(v, 2, MPI_DOUBLE, 0, c), "MPI_Bcast (link constants)");
    t->latency = v[0];
    t->per_byte = v[1];
    return PYR_OK;
}

/* ------------------------------------------------------------- the API */

/* The rank's index among the ranks of its host, and how many share it. */
static int local_rank(MPI_Comm comm, int *local_size)
{
    MPI_Comm node;
    int r = 0;
    *local_size = 1;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS) return 0;
    MPI_Comm_rank(node, &r);
    MPI_Comm_size(node, local_size);
    MPI_Comm_free(&node);
    return r;
}

/* The transport over a duplicate of comm (its messages never meet the caller's). */
static pyr_status_t transport_open(MPI_Comm comm, mpi_impl_t *impl, pyr_transport_t *t)
{
    memset(impl, 0, sizeof *impl);
    impl->comm = MPI_COMM_NULL;
    memset(t, 0, sizeof *t);
    PYR_TRY(check_core());
    MPI_TRY(MPI_Comm_dup(comm, &impl->comm), "MPI_Comm_dup");
    t->impl = impl;
    MPI_Comm_rank(impl->comm, &t->rank);
    MPI_Comm_size(impl->comm, &t->size);
    t->agree = t_agree;
    t->reduce_u64 = t_reduce_u64;
    t->broadcast = t_broadcast;
    t->start = t_start;
    t->finish = t_finish;
    return PYR_OK;
}

static void transport_close(mpi_impl_t *impl)
{
    free(impl->req);
    impl->req = NULL;
    if (impl->comm != MPI_COMM_NULL) MPI_Comm_free(&impl->comm);
}

static pyr_status_t running(const char *who)
{
    int inited = 0, finalized = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (!inited || finalized) return pyr_fail(PYR_ERR_ARG, "%s: MPI is not running; call MPI_Init_thread first", who);
    return PYR_OK;
}

pyr_status_t pyr_execute_mpi(const pyr_problem_t *problem, const pyr_options_t *options, MPI_Comm comm, const pyr_hooks_t *hooks,
                             pyr_field_t **part, pyr_mpi_info_t *info)
{
    if (part) *part = NULL;
    if (!problem || !part) {
        if (info) memset(info, 0, sizeof *info);
        return pyr_fail(PYR_ERR_ARG, "pyr_execute_mpi: a problem and a place for the part are required");
    }
    pyr_field_t *parts[PYR_MAX_FIELDS] = {NULL};
    pyr_status_t st = pyr_execute_mpi_fields(problem, options, comm, hooks, parts, PYR_MAX_FIELDS, info);
    /* the first state field the problem uses (heat, Poisson: u) */
    for (int f = 0; f < PYR_MAX_FIELDS; f++) {
        if (parts[f] && !*part) *part = parts[f];
        else pyr_field_destroy(&parts[f]);
    }
    return st;
}

pyr_status_t pyr_execute_mpi_fields(const pyr_problem_t *problem, const pyr_options_t *options, MPI_Comm comm, const pyr_hooks_t *hooks,
                                    pyr_field_t **parts, int nfields, pyr_mpi_info_t *info)
{
    if (info) memset(info, 0, sizeof *info);
    for (int f = 0; parts && f < nfields; f++) parts[f] = NULL;
    PYR_TRY(running("pyr_execute_mpi"));
    if (!problem || !parts) return pyr_fail(PYR_ERR_ARG, "pyr_execute_mpi: a problem and a place for the parts are required");
    mpi_impl_t impl;
    pyr_transport_t t;
    pyr_status_t st = transport_open(comm, &impl, &t);
    if (st != PYR_OK) {
        transport_close(&impl);
        return st;
    }
    pyr_ranks_env_t env = {0, 1, 0};
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    env.serialized = level >= MPI_THREAD_SERIALIZED;
    env.local_rank = local_rank(impl.comm, &env.local_size);
    st = calibrate(&t);
    st = pyr_mpi_agree(impl.comm, st);
    pyr_ranks_info_t ri;
    if (st == PYR_OK) st = core->execute(problem, options, &t, &env, hooks, parts, nfields, &ri);
    if (st == PYR_OK && info) {
        info->rank = ri.rank;
        info->ranks = ri.ranks;
        for (int a = 0; a < 3; a++) info->lo[a] = ri.lo[a], info->hi[a] = ri.hi[a], info->parts_per_axis[a] = ri.parts_per_axis[a];
        info->run = ri.run;
        snprintf(info->partition, sizeof info->partition, "%s", ri.partition);
    }
    transport_close(&impl);
    return st;
}

/* One file from every rank's part, for the program's glue (multi/ranks.h:
 * pyr_ranks_mpi_t, handed to the core when this library is loaded). */
static pyr_status_t mpi_write_one(const char *path, const pyr_field_t *part, const int64_t lo[3], const int64_t hi[3], const void *comm)
{
    PYR_TRY(running("writing one file over the ranks"));
    if (!comm) return pyr_fail(PYR_ERR_ARG, "writing one file over the ranks: no communicator");
    mpi_impl_t impl;
    pyr_transport_t t;
    pyr_status_t st = transport_open(*(const MPI_Comm *)comm, &impl, &t);
    if (st == PYR_OK) st = core->write_one(path, part, lo, hi, &t, t_write_box);
    transport_close(&impl);
    return st;
}

static const pyr_ranks_mpi_t mpi_table = {sizeof(pyr_ranks_mpi_t), mpi_write_one};

__attribute__((constructor)) static void attach_to_core(void)
{
    if (check_core() == PYR_OK) core->attach_mpi(&mpi_table);
    else pyr_clear_error();
}

pyr_status_t pyr_write_parts_mpi(const char *path, const pyr_field_t *part, const pyr_mpi_info_t *info, MPI_Comm comm)
{
    PYR_TRY(running("pyr_write_parts_mpi"));
    mpi_impl_t impl;
    pyr_transport_t t;
    pyr_status_t st = transport_open(comm, &impl, &t);
    if (st == PYR_OK) {
        /* without info the core refuses, on every rank */
        st = core->write_parts(path, part, info ? info->lo : NULL, info ? info->hi : NULL, &t);
    }
    transport_close(&impl);
    return st;
}

#endif
