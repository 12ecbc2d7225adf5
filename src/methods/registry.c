/* The registry of methods (method.h): one table, in the order method = auto
 * asks its automatic entries (naive where the grid fits, else pyramid). */
#include "methods/method.h"
#include "methods/multigrid.h"

static const pyr_method_entry_t *const registry[] = {
    &pyr_method_naive,
    &pyr_method_trivial,
    &pyr_method_pyramid,
    &pyr_method_longvector,
    &pyr_method_multigrid,
};

int pyr_method_count(void) { return (int)(sizeof registry / sizeof registry[0]); }

const pyr_method_entry_t *pyr_method_at(int i) { return i >= 0 && i < pyr_method_count() ? registry[i] : NULL; }

const pyr_method_entry_t *pyr_method_find(pyr_method_t m)
{
    for (int i = 0; i < pyr_method_count(); i++)
        if (registry[i]->id == m) return registry[i];
    return NULL;
}

pyr_status_t pyr_methods_check(const pyr_problem_t *p, pyr_options_t *o)
{
    for (int i = 0; i < pyr_method_count(); i++)
        if (registry[i]->check) PYR_TRY(registry[i]->check(p, o));
    return PYR_OK;
}
