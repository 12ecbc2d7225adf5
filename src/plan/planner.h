/* The planner's internals shared by its parts: sizing (plan/sizing.c), the
 * model-driven search (plan/search.c), and the creation of plans with
 * MEASURE and wisdom above the executor (tune/). */
#ifndef PYR_PLAN_PLANNER_H
#define PYR_PLAN_PLANNER_H

#include "core/error.h"
#include "plan/plan.h"

/* A candidate the search looked at. */
typedef struct {
    pyr_decomp_t decomp;
    int64_t height;
    int slots;
    double seconds; /* predicted for the whole run */
} candidate_t;

typedef struct {
    candidate_t *c;
    int n, cap;
} candidates_t;

/* The geometry of a plan for a fixed method, decomposition and height under
 * a budget: split axes, piece counts and extents, buffers, exact counts. */
pyr_status_t pyr_plan_build(pyr_plan_t *plan, pyr_method_t method, pyr_decomp_t decomp, int64_t h, uint64_t budget);
/* Pieces in flight when nothing else decides: the user's run.slots, else the backend's default. */
int pyr_plan_requested_slots(const pyr_plan_t *plan);
pyr_status_t pyr_plan_check_decomp(const pyr_problem_t *p, pyr_decomp_t d);

/* Model-driven choices. */
pyr_status_t pyr_plan_note_candidate(candidates_t *cs, pyr_decomp_t d, int64_t h, int slots, double s);
pyr_status_t pyr_plan_predict_with(pyr_plan_t *plan, pyr_method_t method, pyr_decomp_t decomp, int64_t h, uint64_t budget,
                                   double *seconds);
pyr_status_t pyr_plan_search_height(pyr_plan_t *plan, pyr_decomp_t decomp, uint64_t budget, int64_t *best_h, double *best_s,
                                    candidates_t *seen);
int pyr_plan_decomp_candidates(const pyr_problem_t *p, pyr_decomp_t requested, pyr_decomp_t out[2]);
void pyr_plan_add_notice(pyr_plan_t *plan, const char *fmt, ...) PYR_PRINTF(2, 3);

/* The refusal an automatic choice (of decomposition, height, pieces in
 * flight) reports when none of its candidates builds: of the candidates
 * refused for the budget, the one that needs the least memory, so that its
 * "use memory >= N" names the least budget at which the choice plans; a
 * refusal for another reason only where no candidate was refused for its
 * memory.  Zero-initialise, note every refused candidate the choice could
 * have taken right after its build fails (its message is pyr_last_error(),
 * its need plan->refused_bytes), then raise: it returns the kept status with
 * its message and sets plan->refused_bytes to its need. */
typedef struct {
    pyr_status_t status; /* PYR_OK: nothing noted */
    uint64_t need;       /* 0: refused for another reason than the budget */
    char message[1024];
} pyr_refusal_t;
void pyr_refusal_note(pyr_refusal_t *r, const pyr_plan_t *plan, pyr_status_t status);
pyr_status_t pyr_refusal_raise(const pyr_refusal_t *r, pyr_plan_t *plan);

#endif
