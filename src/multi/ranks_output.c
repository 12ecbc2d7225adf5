/* One output file from the parts of the ranks (multi/ranks.h): the part of
 * an MPI run's output that is not MPI.  Rank 0 opens the output through the
 * atomic machinery (io/atomic.h: a temporary in the target's directory) and
 * writes the header; every rank then writes its box of the array into that
 * temporary at once (the transport's write_box: MPI-IO in libpyrgrid_mpi);
 * rank 0 renames it over the target only after every rank has written its
 * own.  Each step agrees on failures first, so a failure on any rank leaves
 * the old file as it was, removes the temporary and is reported by every
 * rank with that rank's message. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/field.h"
#include "io/atomic.h"
#include "io/hdf5.h"
#include "io/json.h"
#include "io/npy_part.h"
#include "multi/parts.h"
#include "multi/ranks.h"
#include "schemes/scheme.h"

/* What rank 0 tells the others once the header is written. */
typedef struct {
    int64_t offset;             /* bytes of header before the data */
    char tmp[PYR_PATH_MAX + 96]; /* the temporary every rank writes into */
} one_file_t;

static int little_endian(void)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

static pyr_status_t write_h5(const pyr_ranks_h5_t *job, const int64_t lo[3], const int64_t hi[3], pyr_transport_t *t);

static const pyr_ranks_h5_t *h5_job; /* the HDF5 result write_one writes (one run per process) */
static const pyr_ranks_h5_writer_t *h5_writer;

void pyr_ranks_attach_h5(const pyr_ranks_h5_writer_t *w) { h5_writer = w && w->size == sizeof *w ? w : NULL; }

void pyr_ranks_set_h5(const pyr_ranks_h5_t *job) { h5_job = job && job->size == sizeof *job ? job : NULL; }

pyr_status_t pyr_ranks_write_one(const char *path, const pyr_field_t *part, const int64_t lo[3], const int64_t hi[3], pyr_transport_t *t,
                                 pyr_ranks_write_box_fn write_box)
{
    pyr_status_t st = PYR_OK;
    if (t && path && h5_job && h5_job->path && !strcmp(path, h5_job->path)) return write_h5(h5_job, lo, hi, t);
    if (!t || !write_box) return pyr_fail(PYR_ERR_ARG, "writing one file over the ranks: no transport");
    if (!path || !part || !lo || !hi || !part->data) st = pyr_fail(PYR_ERR_ARG, "writing one file over the ranks: a path, a part and its box are required");
    else if (!little_endian())
        st = pyr_fail(PYR_ERR_UNSUPPORTED, "writing %s: one .npy over the ranks is written on little-endian hosts only; use the parts (--parts)", path);
    else
        for (int a = 0; a < 3 && st == PYR_OK; a++)
            if (hi[a] - lo[a] != (a < part->dims ? part->n[a] : 1) || lo[a] < 0)
                st = pyr_fail(PYR_ERR_ARG, "writing %s: this rank's box [%lld, %lld) along axis %d does not match its part's %lld nodes", path,
                              (long long)lo[a], (long long)hi[a], a, (long long)(a < part->dims ? part->n[a] : 1));
    PYR_TRY(pyr_ranks_agree(t, st));
    /* the whole array: the boxes tile it from 0, so it ends where the farthest box ends */
    int64_t whole[3];
    for (int a = 0; a < 3; a++) {
        uint64_t v = (uint64_t)hi[a];
        PYR_TRY(t->reduce_u64(t, &v, 1));
        whole[a] = (int64_t)v;
    }
    uint64_t sizes[2] = {(uint64_t)part->dims, (uint64_t)part->precision}, low[2] = {sizes[0], sizes[1]};
    for (int k = 0; k < 2; k++) {
        PYR_TRY(t->reduce_u64(t, &sizes[k], 1));
        PYR_TRY(t->reduce_u64(t, &low[k], 0));
    }
    if (sizes[0] != low[0] || sizes[1] != low[1])
        st = pyr_fail(PYR_ERR_ARG, "writing %s: the ranks' parts differ in dimensions or precision", path);
    PYR_TRY(pyr_ranks_agree(t, st));

    /* rank 0: the temporary and the header */
    one_file_t one;
    memset(&one, 0, sizeof one);
    pyr_atomic_file_t af;
    memset(&af, 0, sizeof af);
    af.slot = -1;
    if (t->rank == 0) {
        st = pyr_atomic_open(&af, path);
        if (st == PYR_OK && !af.tmp_path)
            st = pyr_fail(PYR_ERR_IO, "cannot write %s over %d ranks: it is a device or FIFO, which every rank cannot write at its own place; write "
                          "a regular file, or the parts (pyrgrid run --parts)", path, t->size);
        if (st == PYR_OK && strlen(af.tmp_path) >= sizeof one.tmp)
            st = pyr_fail(PYR_ERR_IO, "cannot write %s over the ranks: its temporary's name is longer than %zu bytes", path, sizeof one.tmp - 1);
        if (st == PYR_OK) {
            int64_t shape[3];
            for (int d = 0; d < part->dims; d++) shape[d] = whole[part->dims - 1 - d];
            st = pyr_npy_write_header(af.fp, path, part->dims, shape, part->precision);
        }
        if (st == PYR_OK) {
            const long at = fflush(af.fp) == 0 ? ftell(af.fp) : -1;
            if (at <= 0) st = pyr_fail(PYR_ERR_IO, "writing %s: the header could not be written", path);
            one.offset = at;
            snprintf(one.tmp, sizeof one.tmp, "%s", af.tmp_path);
        }
    }
    st = pyr_ranks_agree(t, st);
    if (st == PYR_OK) st = pyr_ranks_agree(t, t->broadcast(t, &one, sizeof one, 0));
    /* every rank must reach the temporary before the collective open: an MPI-IO open that fails on
     * some ranks only can leave the others waiting in it */
    if (st == PYR_OK) {
        const int fd = open(one.tmp, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
            st = pyr_fail(PYR_ERR_IO, "cannot write %s: this rank cannot open the temporary %s that rank 0 made (%s); every rank must see "
                          "the output's directory on a shared file system; without one, write the parts (pyrgrid run --parts) and join "
                          "them with pyrgrid assemble", path, one.tmp, strerror(errno));
        else close(fd);
        st = pyr_ranks_agree(t, st);
    }
    /* every rank its box, at once */
    if (st == PYR_OK) {
        const size_t elem = part->precision == PYR_DOUBLE ? sizeof(double) : sizeof(float);
        st = write_box(t, one.tmp, one.offset, part->dims, whole, lo, hi, elem, part->data);
        if (st != PYR_OK) pyr_fail_context(st, "writing %s: ", path);
        st = pyr_ranks_agree(t, st);
    }
    /* rank 0 renames the temporary over the target only now: every rank has written */
    if (t->rank == 0) {
        if (st == PYR_OK) st = pyr_atomic_commit(&af);
        pyr_atomic_abort(&af);
    }
    return pyr_ranks_agree(t, st);
}

/* ------------------------------------------------------------ one HDF5 file
 *
 * Rank 0 writes the file with the serial HDF5 library; the fields reach it a
 * row of chunks at a time (io/hdf5.h: pyr_h5_write_field_slabs), each row a
 * "round": every rank agrees on its status so far, then sends rank 0 its
 * box's part of the row, and rank 0 writes the row once it has every part.
 * Every rank knows the rounds beforehand (the fields in the order the file
 * takes them, the rows of each), so that a failure on rank 0 between two
 * rounds (a full disk) is told to the others at the next round they wait
 * in, and a failure elsewhere at the next round rank 0 asks for. */

typedef struct {
    pyr_transport_t *t;
    const pyr_ranks_h5_t *job;
    pyr_field_t *box[PYR_MAX_FIELDS]; /* this rank's box of each field the file takes */
    int64_t lo[3], hi[3], whole[3];
    int64_t *boxes; /* rank 0: every rank's box (lo then hi) */
    int order[PYR_MAX_FIELDS], file_index[PYR_MAX_FIELDS], norder;
    int axis;              /* the slowest axis (the file's axis 0) */
    int64_t rows, nslabs;  /* planes a round; rounds a field */
    int64_t round, rounds; /* rounds done; every round */
    int agreed;            /* a round agreed on a failure (every rank knows it) */
    size_t elem;
    char *pack;    /* this rank's part of a row, packed (x fastest) */
    char **parts;  /* rank 0: each rank's */
} h5_ranks_t;

/* The part of box [blo, bhi) in planes [s0, s1) of the slowest axis: its [plo, phi), 0 when empty. */
static int64_t piece(const h5_ranks_t *h, const int64_t *blo, const int64_t *bhi, int64_t s0, int64_t s1, int64_t plo[3], int64_t phi[3])
{
    int64_t count = 1;
    for (int a = 0; a < 3; a++) {
        plo[a] = blo[a];
        phi[a] = bhi[a];
        if (a == h->axis) {
            if (plo[a] < s0) plo[a] = s0;
            if (phi[a] > s1) phi[a] = s1;
        }
        count *= phi[a] > plo[a] ? phi[a] - plo[a] : 0;
    }
    return count;
}

/* Nodes [plo, phi) from src (its box starts at slo, n[] nodes, x fastest) into dst (dlo, dn[]). */
static void copy_nodes(const char *src, const int64_t slo[3], const int64_t sn[3], char *dst, const int64_t dlo[3], const int64_t dn[3],
                       const int64_t plo[3], const int64_t phi[3], size_t elem)
{
    const size_t row = (size_t)(phi[0] - plo[0]) * elem;
    for (int64_t z = plo[2]; z < phi[2]; z++)
        for (int64_t y = plo[1]; y < phi[1]; y++) {
            const int64_t si = ((z - slo[2]) * sn[1] + (y - slo[1])) * sn[0] + (plo[0] - slo[0]);
            const int64_t di = ((z - dlo[2]) * dn[1] + (y - dlo[1])) * dn[0] + (plo[0] - dlo[0]);
            memcpy(dst + (size_t)di * elem, src + (size_t)si * elem, row);
        }
}

/* Round h->round: agree, then rank 0 gathers every rank's part of the row into buf (rank 0 only). */
static pyr_status_t h5_round(h5_ranks_t *h, pyr_status_t mine, void *buf)
{
    enum { TAG = 31100 };
    pyr_transport_t *t = h->t;
    pyr_status_t st = pyr_ranks_agree(t, mine);
    if (st != PYR_OK) {
        h->agreed = 1;
        return st;
    }
    const int f = h->order[h->round / h->nslabs];
    const int64_t s0 = (h->round % h->nslabs) * h->rows, s1 = s0 + h->rows < h->whole[h->axis] ? s0 + h->rows : h->whole[h->axis];
    h->round++;
    int64_t plo[3], phi[3], pn[3], n[3];
    for (int a = 0; a < 3; a++) n[a] = h->hi[a] - h->lo[a];
    const int64_t mine_count = piece(h, h->lo, h->hi, s0, s1, plo, phi);
    if (t->rank != 0) {
        if (!mine_count) return PYR_OK;
        for (int a = 0; a < 3; a++) pn[a] = phi[a] - plo[a];
        copy_nodes(h->box[f]->data, h->lo, n, h->pack, plo, pn, plo, phi, h->elem);
        pyr_wire_t w = {0, TAG, h->pack, (size_t)mine_count * h->elem};
        st = t->start(t, &w, 1, NULL, 0);
        return st == PYR_OK ? t->finish(t) : st;
    }
    /* rank 0: the row is planes [s0, s1) of the whole grid */
    int64_t rlo[3] = {0, 0, 0}, rn[3];
    for (int a = 0; a < 3; a++) rn[a] = h->whole[a];
    rlo[h->axis] = s0;
    rn[h->axis] = s1 - s0;
    pyr_wire_t *w = t->size > 1 ? calloc((size_t)t->size - 1, sizeof *w) : NULL;
    if (t->size > 1 && !w) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    int nw = 0;
    for (int r = 1; r < t->size; r++) {
        const int64_t c = piece(h, h->boxes + 6 * r, h->boxes + 6 * r + 3, s0, s1, plo, phi);
        if (c) w[nw++] = (pyr_wire_t){r, TAG, h->parts[r], (size_t)c * h->elem};
    }
    st = nw ? t->start(t, NULL, 0, w, nw) : PYR_OK;
    if (nw && st == PYR_OK) st = t->finish(t);
    free(w);
    if (st != PYR_OK) return st;
    if (piece(h, h->lo, h->hi, s0, s1, plo, phi)) copy_nodes(h->box[f]->data, h->lo, n, buf, rlo, rn, plo, phi, h->elem);
    for (int r = 1; r < t->size; r++) {
        if (!piece(h, h->boxes + 6 * r, h->boxes + 6 * r + 3, s0, s1, plo, phi)) continue;
        for (int a = 0; a < 3; a++) pn[a] = phi[a] - plo[a];
        copy_nodes(h->parts[r], plo, pn, buf, rlo, rn, plo, phi, h->elem);
    }
    return PYR_OK;
}

/* The file's field i, planes [first, first + count): the next round (rank 0, from the HDF5 writer). */
static pyr_status_t h5_fill(void *user, int i, int64_t first, int64_t count, void *buf)
{
    h5_ranks_t *h = user;
    if (h->round >= h->rounds || h->file_index[h->round / h->nslabs] != i || first != (h->round % h->nslabs) * h->rows ||
        count > h->rows)
        return pyr_fail(PYR_ERR_INTERNAL, "writing %s over the ranks: the file asks for field %d planes %lld.. out of turn", h->job->path, i,
                        (long long)first);
    return h5_round(h, PYR_OK, buf);
}

/* Every rank's box on rank 0 (boxes[r * 6 ...]: lo then hi). */
static pyr_status_t h5_gather_boxes(h5_ranks_t *h)
{
    enum { TAG = 31101 };
    pyr_transport_t *t = h->t;
    int64_t mine[6];
    for (int a = 0; a < 3; a++) mine[a] = h->lo[a], mine[3 + a] = h->hi[a];
    pyr_status_t st = PYR_OK;
    if (t->rank == 0) {
        memcpy(h->boxes, mine, sizeof mine);
        pyr_wire_t *w = t->size > 1 ? calloc((size_t)t->size - 1, sizeof *w) : NULL;
        if (t->size > 1 && !w) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
        for (int r = 1; r < t->size; r++) w[r - 1] = (pyr_wire_t){r, TAG, h->boxes + 6 * r, 6 * sizeof *h->boxes};
        st = t->size > 1 ? t->start(t, NULL, 0, w, t->size - 1) : PYR_OK;
        if (st == PYR_OK && t->size > 1) st = t->finish(t);
        free(w);
    } else {
        pyr_wire_t w = {0, TAG, mine, sizeof mine};
        st = t->start(t, &w, 1, NULL, 0);
        if (st == PYR_OK) st = t->finish(t);
    }
    return st;
}

/* This rank's box of input field i, made from the problem as its parts make theirs. */
static pyr_status_t h5_make_input(const pyr_problem_t *p, int i, const int64_t lo[3], const int64_t hi[3], pyr_field_t **out)
{
    const pyr_scheme_t *s = pyr_scheme_of(p->equation);
    int64_t n[3];
    for (int a = 0; a < 3; a++) n[a] = hi[a] - lo[a];
    if (!s || (!s->init_input_part && !s->windowed))
        return pyr_fail(PYR_ERR_UNSUPPORTED, "output.field: the %s scheme's input %s cannot be made for one rank's box; write output.field = "
                        "NAME.npy", s ? s->name : "?", pyr_scheme_field_name(p->equation, i));
    PYR_TRY(pyr_field_alloc(p->dims, n, p->precision, out));
    pyr_status_t st;
    if (s->init_input_part) st = s->init_input_part(p, i, lo, *out);
    else {
        /* a windowed scheme's, on the box's own problem: its nodes as a window on the whole grid */
        pyr_problem_t w = *p;
        for (int a = 0; a < 3; a++) {
            w.whole[a] = pyr_problem_whole(p, a);
            w.origin[a] = p->origin[a] + lo[a];
            w.n[a] = n[a];
        }
        st = s->init_input(&w, i, *out);
    }
    if (st != PYR_OK) pyr_field_destroy(out);
    return st;
}

static pyr_status_t write_h5(const pyr_ranks_h5_t *job, const int64_t lo[3], const int64_t hi[3], pyr_transport_t *t)
{
    h5_ranks_t h;
    memset(&h, 0, sizeof h);
    h.t = t;
    h.job = job;
    const pyr_problem_t *p = job->problem;
    pyr_status_t st = PYR_OK;
    if (!h5_writer) st = pyr_fail(PYR_ERR_INTERNAL, "writing %s over the ranks: this libpyrgrid has no HDF5 result writer", job->path);
    else if (!p || !job->outputs || !job->fields || !job->run || !lo || !hi || job->nfields > PYR_MAX_FIELDS)
        st = pyr_fail(PYR_ERR_ARG, "writing %s over the ranks: the problem, its outputs, the parts, the run and this rank's box are required",
                      job->path);
    for (int a = 0; a < 3 && st == PYR_OK; a++) {
        h.lo[a] = lo[a];
        h.hi[a] = hi[a];
        if (lo[a] < 0 || hi[a] < lo[a] || hi[a] > p->n[a])
            st = pyr_fail(PYR_ERR_ARG, "writing %s: this rank's box [%lld, %lld) along axis %d is not in the grid", job->path, (long long)lo[a],
                          (long long)hi[a], a);
    }
    /* this rank's box of every field the file takes: the run's parts, and the inputs made here */
    if (st == PYR_OK) {
        for (int i = 0; i < job->nfields; i++) h.box[i] = job->fields[i];
        for (int i = 0; i < job->nfields && st == PYR_OK; i++) {
            if (h.box[i] || !pyr_scheme_field_input(p->equation, i) || !pyr_problem_field_used(p, i)) continue;
            st = h5_make_input(p, i, lo, hi, &h.box[i]);
        }
    }
    if (st == PYR_OK) {
        h.norder = h5_writer->order(p, h.box, job->nfields, h.order, h.file_index);
        if (h.norder < 0) st = pyr_fail(PYR_ERR_INTERNAL, "writing %s: too many fields", job->path);
        for (int k = 0; k < h.norder && st == PYR_OK; k++) {
            const pyr_field_t *f = h.box[h.order[k]];
            for (int a = 0; a < 3 && st == PYR_OK; a++)
                if (!f || !f->data || f->dims != p->dims || f->precision != p->precision || f->n[a] != hi[a] - lo[a])
                    st = pyr_fail(PYR_ERR_ARG, "writing %s: this rank's part of %s does not match its box", job->path,
                                  pyr_scheme_field_name(p->equation, h.order[k]));
        }
    }
    if (st == PYR_OK) {
        /* the rows of chunks the file takes each field in, and so the rounds: the same on every rank */
        for (int a = 0; a < 3; a++) h.whole[a] = p->n[a];
        h.axis = p->dims - 1;
        h.elem = pyr_precision_size(p->precision);
        h.rows = pyr_h5_slab_rows(p->dims, p->n, p->precision);
        h.nslabs = (p->n[h.axis] + h.rows - 1) / h.rows;
        h.rounds = (int64_t)h.norder * h.nslabs;
    }
    if (st == PYR_OK) {
        /* room for this rank's part of the largest row (rank 0: of every rank's, below) */
        int64_t plo[3], phi[3], most = 0;
        for (int64_t s0 = 0; s0 < p->n[h.axis]; s0 += h.rows) {
            const int64_t c = piece(&h, lo, hi, s0, s0 + h.rows, plo, phi);
            if (c > most) most = c;
        }
        h.pack = malloc((size_t)most * h.elem + 1);
        if (!h.pack) st = pyr_fail(PYR_ERR_NOMEM, "writing %s: out of host memory", job->path);
        if (st == PYR_OK && t->rank == 0) {
            h.boxes = calloc((size_t)t->size * 6, sizeof *h.boxes);
            h.parts = calloc((size_t)t->size, sizeof *h.parts);
            if (!h.boxes || !h.parts) st = pyr_fail(PYR_ERR_NOMEM, "writing %s: out of host memory", job->path);
        }
    }
    st = pyr_ranks_agree(t, st);
    if (st == PYR_OK) {
        /* every rank takes part in every round: the same fields and rows everywhere */
        uint64_t most = (uint64_t)h.rounds, least = most;
        st = t->reduce_u64(t, &most, 1);
        if (st == PYR_OK) st = t->reduce_u64(t, &least, 0);
        if (st == PYR_OK && most != least)
            st = pyr_fail(PYR_ERR_INTERNAL, "writing %s over the ranks: the ranks' parts hold different fields", job->path);
        st = pyr_ranks_agree(t, st);
    }
    if (st == PYR_OK) st = pyr_ranks_agree(t, h5_gather_boxes(&h));
    if (st == PYR_OK && t->rank == 0) {
        /* room for each rank's part of the largest row */
        for (int r = 1; r < t->size && st == PYR_OK; r++) {
            int64_t plo[3], phi[3], most = 0;
            for (int64_t s0 = 0; s0 < p->n[h.axis]; s0 += h.rows) {
                const int64_t c = piece(&h, h.boxes + 6 * r, h.boxes + 6 * r + 3, s0, s0 + h.rows, plo, phi);
                if (c > most) most = c;
            }
            h.parts[r] = malloc((size_t)most * h.elem + 1);
            if (!h.parts[r]) st = pyr_fail(PYR_ERR_NOMEM, "writing %s: out of host memory", job->path);
        }
        st = pyr_ranks_agree(t, st);
    } else if (st == PYR_OK)
        st = pyr_ranks_agree(t, PYR_OK);
    if (st == PYR_OK) {
        if (t->rank == 0) {
            pyr_json_t j;
            pyr_json_init(&j, 0);
            pyr_json_object(&j, NULL);
            pyr_json_int(&j, "ranks", t->size);
            if (job->partition) pyr_json_string(&j, "partition", job->partition);
            pyr_json_end(&j);
            pyr_problem_outputs_t o = *job->outputs;
            o.field = job->path;
            st = h5_writer->write(p, &o, h.box, job->nfields, job->run, pyr_json_text(&j), h5_fill, &h);
            pyr_json_free(&j);
            /* the others wait in the next round: tell them */
            if (st == PYR_OK && h.round != h.rounds)
                st = pyr_fail(PYR_ERR_INTERNAL, "writing %s over the ranks: %lld of %lld rows written", job->path, (long long)h.round,
                              (long long)h.rounds);
            if (st != PYR_OK && !h.agreed && h.round < h.rounds) h5_round(&h, st, NULL);
        } else {
            pyr_status_t mine = PYR_OK;
            while (h.round < h.rounds && !h.agreed) {
                const pyr_status_t r = h5_round(&h, mine, NULL);
                if (h.agreed) st = r;
                else mine = r;
            }
            if (st == PYR_OK) st = mine;
        }
        st = pyr_ranks_agree(t, st);
    }
    for (int i = 0; i < job->nfields; i++)
        if (h.box[i] != job->fields[i]) pyr_field_destroy(&h.box[i]);
    for (int r = 0; h.parts && r < t->size; r++) free(h.parts[r]);
    free(h.parts);
    free(h.boxes);
    free(h.pack);
    return st;
}
