/* The long-vector method's entry (methods/method.h): naive's resident piece
 * stepped by the heat kernel's variant longvector (cuBLAS, cuda/), priced by
 * the paper's model (plan/longvector.h).  Which problems and options it takes,
 * and its plans' model constants. */
#ifndef PYR_METHODS_LONGVECTOR_METHOD_H
#define PYR_METHODS_LONGVECTOR_METHOD_H

#include "plan/longvector.h"
#include "plan/plan.h"

/* Whether the problem and options fit the long-vector method (checked before
 * any device is touched): method = longvector needs the 2D heat scheme and
 * takes no decomposition, piece size or other kernel variant; the variant
 * longvector comes only with method = longvector.  PYR_OK when neither is
 * asked for. */
pyr_status_t pyr_longvector_check(const pyr_problem_t *p, const pyr_options_t *o);
/* The refusal when a long-vector plan has no usable CUDA backend (not
 * built, or no GPU); the message says what works. */
pyr_status_t pyr_longvector_check_backend(int built_with_cuda);
/* A long-vector plan's model constants: the calibrated ones of its wisdom
 * record, else the defaults for this GPU's resident threads (the plan's
 * model_source says which). */
void pyr_longvector_constants(pyr_plan_t *plan);

#endif
