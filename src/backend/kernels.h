/* Kernels, registered per scheme and backend (ggml's backend ops and
 * test-backend-ops are the model): a kernel computes sub-steps of one scheme
 * on a piece held by a device runtime (backend/device.h).  Each has
 * variants (steps per launch, tiles, wavefront or sweep) that the planner
 * chooses (the wisdom's record, else the kernel's default) and records;
 * tests and users choose one through pyr_options_t.kernel, never through
 * the environment.  Adding a scheme or a backend adds table entries here,
 * and the conformance test (tests/conformance/test_conformance.c) runs every entry
 * against the CPU naive method. */
#ifndef PYR_BACKEND_KERNELS_H
#define PYR_BACKEND_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "backend/device.h"
#include "schemes/scheme.h"

#define PYR_VARIANT_PARAMS 3

typedef struct {
    int64_t n[3];
} pyr_grid_dims_t;

/* A variant: a name and up to three parameters (0 = the kernel's choice).
 * Written "name" or "name:a,b,c" (trailing zeros left out). */
typedef struct {
    char name[12];
    int p[PYR_VARIANT_PARAMS];
} pyr_variant_t;

/* Point sources and probes of a call (Maxwell's), in grid coordinates. */
typedef struct {
    int field;          /* the scheme's field */
    int64_t node[3];
} pyr_kernel_point_t;

typedef struct {
    const pyr_piece_t *piece;
    const pyr_coef_t *coef;
    const pyr_box_t *boxes; /* the box of each sub-step, in order: steps x the scheme's sub-steps */
    int nboxes;
    const pyr_variant_t *variant;
    /* Schemes with time-dependent terms and probes (zero otherwise): */
    int64_t step;                        /* the global step of the call's first sub-step */
    const pyr_grid_dims_t *grid;         /* the whole grid's nodes per axis */
    int nsources;                        /* after the last sub-step of each step that updates a source's field, */
    const pyr_kernel_point_t *sources;   /* field(node) += amplitudes[s * nsources + i] (s: the call's step) */
    const double *amplitudes;
    int nprobes;                         /* after each step, probes_out[s * nprobes + i] = field(node), */
    const pyr_kernel_point_t *probes;    /* valid once wait(slot) has returned */
    double *probes_out;
    /* (NULL: none) Sources whose amplitudes the kernel computes: where terms[i].k >= 0, source i adds
     * pyr_scheme_term_value(&terms[i], series + s * nseries) (scheme.h) instead of amplitudes[...].
     * sources_id: a number the list of sources and terms has alone in the process, for as long as it
     * lives (a kernel may keep what it derives from them under it); 0: none (derive it per call). */
    const pyr_scheme_term_t *terms;
    const double *series;
    int nseries;
    uint64_t sources_id;
    /* (skewed passes) The call's halo through the stores, where the kernel's halo() accepted it: run()
     * copies the nodes of `save` of its first layer (the ping-pong field's buffer piece->cur) into save_to
     * as it reads them, and reads the nodes of `fill` from fill_from instead of that buffer.  Both are views
     * of the buffer's pitch and rows (their field's buffer 0); NULL: none. */
    const pyr_piece_t *save_to, *fill_from;
    pyr_box_t save, fill;
    /* (a layer read back: plan->previous; 0 = none) The layer two sweeps back that the call's first
     * sub-step reads at each node lies older_shift planes (along the last axis) below the place the
     * sub-step writes that node, in the same buffer: where a skewed call's output mapping moved on from the
     * call before's input mapping, which is where that call left it.  Writing a node then overwrites the
     * layer before of the node older_shift planes above, so the kernel writes those first: the sub-step in
     * chunks of at most older_shift planes, the highest first. */
    int64_t older_shift;
} pyr_kernel_call_t;

typedef struct pyr_kernel {
    pyr_equation_t equation;
    pyr_backend_kind_t backend;
    const char *help; /* its variants, for `pyrgrid info` and messages */
    /* Whether a variant exists for this dimension and precision; the message
     * names what does. */
    pyr_status_t (*check)(const pyr_variant_t *v, int dims, pyr_precision_t precision);
    /* The variant the planner takes when the wisdom has none. */
    void (*default_variant)(int dims, pyr_precision_t precision, pyr_variant_t *v);
    /* Variants worth timing (calibration): fills at most max, returns how many. */
    int (*candidates)(int dims, pyr_precision_t precision, pyr_variant_t *v, int max);
    /* Compute the sub-steps: sub-step i (0-based) reads the ping-pong fields'
     * buffer (cur + i) % 2 and writes the other, on boxes[i] only (for one
     * sub-step per step; in general the scheme's table says what each reads
     * and writes). */
    pyr_status_t (*run)(void *ctx, int slot, const pyr_kernel_call_t *call);
    /* (optional, NULL = none) Device memory a variant keeps beside the
     * piece buffers, for pieces of `layer_bytes` per buffer (the CUDA heat
     * kernel's longvector: two work vectors); the planner counts it in the
     * budget, the variant keeps it in the runtime context's states. */
    uint64_t (*scratch_bytes)(const pyr_variant_t *v, uint64_t layer_bytes);
    /* (optional, NULL = 3) Steps one launch of the variant takes (fused
     * kernels: their depth K; 1 for one step per launch): the skewed
     * decomposition's calls take this many (plan/skewed.h). */
    int (*launch_steps)(const pyr_variant_t *v, int dims, pyr_precision_t precision);
    /* (optional, NULL = no) Whether run(call) writes nothing but the last
     * box, into the buffer the call ends in (one fused launch, its middle
     * layers on chip): while it runs, the rest of that buffer may then be
     * written by others (the skewed executor fills the next call's input
     * beside it). */
    int (*last_box_only)(void *ctx, const pyr_kernel_call_t *call);
    /* (optional, NULL = no) Whether run(call) takes the call's halo (save_to / fill_from, those set)
     * itself: the skewed executor then makes no copy of them. */
    int (*halo)(void *ctx, const pyr_kernel_call_t *call);
    /* (optional, 0 = every plan) 1: the variant uses its work memory only on
     * a piece that is the whole grid (a resident plan's: its calls on other
     * pieces run without it), so plans in pieces do not count it. */
    int scratch_resident_only;
} pyr_kernel_t;

/* A variant of a scheme's kernel that a method above the backend computes
 * with its own sequence of operations (the long-vector method's cuBLAS
 * steps, methods/longvector/): the method registers it from its own folder
 * (pyr_kernel_extra_register, as the library loads), and the scheme's kernel
 * hands a call of that variant to it (check, run and the work memory it
 * keeps), so that the backend knows no method. */
typedef struct pyr_kernel_extra {
    pyr_equation_t equation;
    pyr_backend_kind_t backend;
    const char *name; /* the variant's name */
    pyr_status_t (*check)(const pyr_variant_t *v, int dims, pyr_precision_t precision);
    pyr_status_t (*run)(void *ctx, int slot, const pyr_kernel_call_t *call);
    uint64_t (*scratch_bytes)(const pyr_variant_t *v, uint64_t layer_bytes);
} pyr_kernel_extra_t;

/* The kernel of a scheme on a backend, or NULL when there is none. */
const pyr_kernel_t *pyr_kernel_find(pyr_equation_t equation, pyr_backend_kind_t backend);
/* Add an extra variant (kept for the process; thread-safe); 0 when the
 * table is full or it is there already. */
int pyr_kernel_extra_register(const pyr_kernel_extra_t *x);
/* The extra variant of that name for a scheme on a backend, or NULL. */
const pyr_kernel_extra_t *pyr_kernel_extra_find(pyr_equation_t equation, pyr_backend_kind_t backend, const char *name);
/* Every registered kernel (of the backends compiled in); returns the count. */
int pyr_kernel_all(const pyr_kernel_t *const **out);

/* "fused:5" -> {"fused", {5}}; PYR_ERR_CONFIG with a message when malformed. */
pyr_status_t pyr_variant_parse(const char *text, pyr_variant_t *out);
void pyr_variant_format(const pyr_variant_t *v, char *out, size_t size);
/* The kernel's variant for a plan: `text` when given (checked), else the default. */
pyr_status_t pyr_kernel_variant(const pyr_kernel_t *k, const char *text, int dims, pyr_precision_t precision, pyr_variant_t *out);

#endif
