/* The methods as registered entries, in the manner of FFTW's solver_adt: each
 * method (naive, trivial, pyramid with its decompositions, long-vector) is a
 * small table that says whether it takes a problem, its options and a backend
 * (and why not), chooses its decomposition and height by the model's estimate
 * of its own candidates (or the wisdom's earlier choice, or a measurement),
 * and fills the plan's geometry: split axes, pieces, passes and counts, through
 * plan/sizing.c.  Plan creation (tune/create.c) asks the entries in the
 * registry's order and keeps the one the options force, or for method = auto
 * the first automatic entry that fits the budget; it lends each entry what
 * only it has (the wisdom, MEASURE) through pyr_method_ctx_t, as FFTW's planner
 * is lent to a solver's mkplan, so that methods/ stays below exec/ and tune/. */
#ifndef PYR_METHODS_METHOD_H
#define PYR_METHODS_METHOD_H

#include "core/error.h"
#include "plan/planner.h"

/* A choice measured earlier on this machine (the wisdom's record for this problem and budget). */
typedef struct {
    pyr_decomp_t decomp;
    int64_t height;
    int slots;       /* 0: not recorded */
    char kernel[32]; /* the variant measured with it ("" : not recorded) */
} pyr_method_known_t;

typedef struct pyr_method_ctx pyr_method_ctx_t;

/* What plan creation lends a method while it chooses.  budget and the
 * decompositions to weigh are set before the entries are asked; seen
 * collects the candidates a model search looked at (the measurement times
 * some of them); the hooks are the layer above's, NULL where it has none. */
struct pyr_method_ctx {
    uint64_t budget;
    pyr_decomp_t cands[3]; /* decompositions to weigh: the requested one, or those that apply (and skewed pieces) */
    int ncand;
    candidates_t seen;
    /* the wisdom's choice for this plan's problem and budget: 1 and *out when there is one */
    int (*known)(pyr_method_ctx_t *ctx, const pyr_plan_t *plan, pyr_method_known_t *out);
    /* plan = measure: time the candidates in seen, set the fastest (decomposition, height, slots and,
     * unless the caller chose one, the plan's variant) and record it in the wisdom */
    pyr_status_t (*measure)(pyr_method_ctx_t *ctx, pyr_plan_t *plan, pyr_decomp_t *decomp, int64_t *h, int *slots);
    void *user; /* the hooks' own state */
};

/* A method's choice for a plan, before the plan is built with it. */
typedef struct {
    pyr_decomp_t decomp;
    int64_t height;  /* steps of a full pass (naive and long-vector: steps per compute call) */
    double seconds;  /* the model's estimate of the run with this choice; NAN where nothing was priced (the
                        options fixed every choice, or the wisdom's measured choice was taken) */
    int modelled;    /* the decomposition or height was chosen by the model */
    char why[256];   /* how it was chosen, for the plan's method_why */
} pyr_method_choice_t;

typedef struct pyr_method_entry {
    pyr_method_t id;
    const char *name; /* as method = NAME and pyr_method_name say */
    int automatic;    /* method = auto may choose it: the first such entry, in the registry's order, that fits */
    /* Whether the problem and options fit the method, before any device is
     * touched; may set what the method implies (the long-vector method's
     * kernel variant).  Every entry is asked for every plan, whatever the
     * method, so that an entry refuses its own settings given with another
     * method.  PYR_OK when there is nothing to refuse.  May be NULL. */
    pyr_status_t (*check)(const pyr_problem_t *p, pyr_options_t *o);
    /* Whether the method runs on the backend chosen; fails saying what
     * works.  NULL: every backend. */
    pyr_status_t (*device)(pyr_backend_kind_t kind);
    /* method = auto: whether the method fits this plan within ctx->budget
     * (fails saying why).  NULL: it always takes the plan, and its own
     * choice reports what does not fit. */
    pyr_status_t (*fits)(pyr_plan_t *plan, pyr_method_ctx_t *ctx);
    /* Choose the decomposition and height (the model's estimate of its
     * candidates, the wisdom, a measurement), leaving the plan's geometry
     * unspecified; fails saying why no choice fits. */
    pyr_status_t (*choose)(pyr_plan_t *plan, pyr_method_ctx_t *ctx, pyr_method_choice_t *choice);
    /* Fill the plan with the choice: pieces, passes, buffers, counts, and what the method adds to the
     * plan's model (the long-vector constants). */
    pyr_status_t (*build)(pyr_plan_t *plan, pyr_method_ctx_t *ctx, const pyr_method_choice_t *choice);
    /* (optional, NULL = the executor's passes) Run the plan by the method's
     * own loop (multigrid: cycles over its levels), as pyr_execute_fields. */
    pyr_status_t (*execute)(pyr_plan_t *plan, pyr_field_t *const *fields, int nfields, const pyr_hooks_t *hooks, pyr_run_info_t *run);
} pyr_method_entry_t;

/* The registry: entries in the order method = auto asks them (methods/registry.c). */
int pyr_method_count(void);
const pyr_method_entry_t *pyr_method_at(int i);
/* The entry of method m (NULL for PYR_METHOD_AUTO or an unknown one). */
const pyr_method_entry_t *pyr_method_find(pyr_method_t m);
/* Every entry's check (see check above), in the registry's order: the first refusal. */
pyr_status_t pyr_methods_check(const pyr_problem_t *p, pyr_options_t *o);

/* The entries (methods/naive.c, trivial.c, pyramid.c, longvector/method.c). */
extern const pyr_method_entry_t pyr_method_naive, pyr_method_trivial, pyr_method_pyramid, pyr_method_longvector;

/* Steps per compute call of a plan whose grid stays resident (naive, long-vector): run.height when given, else
 * about 100 in whole launches of the kernel, never more than the run's steps. */
int64_t pyr_method_resident_chunk(const pyr_plan_t *plan);

#endif
