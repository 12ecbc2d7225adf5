/* Halo exchanges between the parts of a larger grid (several devices, MPI
 * ranks: multi/parts.h), and why they give a single device's result.
 *
 * A part owning box B of the grid runs the ordinary single-device executor
 * on a local grid: B grown by g = H x reach nodes on every side that faces
 * another part, whose outermost nodes the scheme holds fixed like a
 * boundary.  After H steps the nodes of B are exactly those of a run on the
 * whole grid (the error that the frozen edge makes travels at most `reach`
 * nodes a step), so the executor's passes end at multiples of H and the
 * hook (exec/part_io.h) then replaces the halo ring (the local grid less B)
 * with the neighbours' values.  A pass that ends at the scheme's check
 * reduces the change over B only (reduce_box), and the hook replaces it
 * with the maximum over all parts before the executor compares it with the
 * tolerance, so every part stops at the same sweep as one device would.
 *
 * The swap (exchange.c) reads and writes the parts' host fields: packed
 * and posted to other ranks, copied between parts of this process (device
 * to device where both keep their grid resident), unpacked from other
 * ranks. */
#ifndef PYR_MULTI_EXCHANGE_H
#define PYR_MULTI_EXCHANGE_H

#include "multi/parts_internal.h"

#endif
