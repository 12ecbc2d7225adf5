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
#include "io/npy_part.h"
#include "multi/parts.h"
#include "multi/ranks.h"

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

pyr_status_t pyr_ranks_write_one(const char *path, const pyr_field_t *part, const int64_t lo[3], const int64_t hi[3], pyr_transport_t *t,
                                 pyr_ranks_write_box_fn write_box)
{
    pyr_status_t st = PYR_OK;
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
