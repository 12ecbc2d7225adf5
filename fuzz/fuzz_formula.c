/* The formula compiler of the solver's fields: any text compiles or fails
 * with a message; a compiled formula evaluates without crashing. */
#include "fuzz_util.h"
#include "solvers/lgs/lgs_expr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    pyr_expr_t *e = NULL;
    if (pyr_expr_compile(text, &e) == PYR_OK) {
        if (!e) abort();
        volatile double v = pyr_expr_eval(e, 0.25, 0.75) + pyr_expr_eval(e, 0, 1);
        (void)v;
    } else if (e) {
        abort();
    }
    pyr_expr_destroy(&e);
    free(text);
    return 0;
}
