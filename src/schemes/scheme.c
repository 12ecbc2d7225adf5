/* The scheme tables' common queries. */
#include "schemes/scheme.h"

#include <string.h>

#include "core/error.h"
#include "schemes/maxwell.h"

/* Every scheme the library has: a new scheme is one table and one line here. */
static const pyr_scheme_t *const registry[] = {&pyr_scheme_heat, &pyr_scheme_poisson, &pyr_scheme_maxwell};

int pyr_scheme_count(void)
{
    return (int)(sizeof registry / sizeof registry[0]);
}

const pyr_scheme_t *pyr_scheme_at(int i)
{
    return i >= 0 && i < pyr_scheme_count() ? registry[i] : NULL;
}

const pyr_scheme_t *pyr_scheme_of(pyr_equation_t equation)
{
    for (int i = 0; i < pyr_scheme_count(); i++)
        if (registry[i]->equation == equation) return registry[i];
    return NULL;
}

const char *pyr_equation_name(pyr_equation_t equation)
{
    const pyr_scheme_t *s = pyr_scheme_of(equation);
    return s ? s->name : "unknown";
}

int pyr_equation_from_name(const char *name, pyr_equation_t *out)
{
    for (int i = 0; i < pyr_scheme_count(); i++)
        if (!strcmp(name, registry[i]->name)) {
            *out = registry[i]->equation;
            return 1;
        }
    return 0;
}

int pyr_scheme_step_reach(const pyr_scheme_t *s, int axis, int high)
{
    int r = 0;
    for (int k = 0; k < s->nsub; k++) r += high ? s->sub[k].reach_hi[axis] : s->sub[k].reach_lo[axis];
    return r;
}

int pyr_scheme_margin(const pyr_scheme_t *s, const pyr_problem_t *p, int k, int axis, int high)
{
    if (s->margin) return s->margin(p, k, axis, high);
    return high ? s->sub[k].margin_hi[axis] : s->sub[k].margin_lo[axis];
}

int pyr_scheme_fixed(const pyr_scheme_t *s, const pyr_problem_t *p, int axis, int high)
{
    int m = -1;
    for (int k = 0; k < s->nsub; k++) {
        int v = pyr_scheme_margin(s, p, k, axis, high);
        if (m < 0 || v < m) m = v;
    }
    return m < 0 ? 0 : m;
}

int pyr_scheme_values_up(const pyr_scheme_t *s, unsigned used)
{
    int n = 0;
    for (int i = 0; i < s->nfields; i++) n += (used >> i) & 1;
    return n;
}

int pyr_scheme_values_down(const pyr_scheme_t *s, unsigned used)
{
    int n = 0;
    for (int i = 0; i < s->nfields; i++) n += ((used >> i) & 1) && s->field[i].role != PYR_FIELD_INPUT;
    return n;
}

int pyr_scheme_field_count(pyr_equation_t equation)
{
    const pyr_scheme_t *s = pyr_scheme_of(equation);
    return s ? s->nfields : 0;
}

const char *pyr_scheme_field_name(pyr_equation_t equation, int i)
{
    const pyr_scheme_t *s = pyr_scheme_of(equation);
    return s && i >= 0 && i < s->nfields ? s->field[i].name : NULL;
}

int pyr_scheme_field_updated(pyr_equation_t equation, int i)
{
    const pyr_scheme_t *s = pyr_scheme_of(equation);
    return s && i >= 0 && i < s->nfields && s->field[i].role != PYR_FIELD_INPUT && s->field[i].role != PYR_FIELD_AUX;
}

pyr_status_t pyr_problem_time_step(const pyr_problem_t *problem, double *dt)
{
    if (!problem || !dt) return pyr_fail(PYR_ERR_ARG, "pyr_problem_time_step: problem and dt are required");
    *dt = 0;
    if (problem->equation == PYR_EQ_MAXWELL) return pyr_maxwell_dt(problem, dt);
    if (problem->equation == PYR_EQ_HEAT) *dt = problem->heat.dt;
    return PYR_OK;
}

int pyr_problem_field_used(const pyr_problem_t *problem, int i)
{
    const pyr_scheme_t *s = problem ? pyr_scheme_of(problem->equation) : NULL;
    if (!s || i < 0 || i >= s->nfields) return 0;
    return (s->fields_used(problem) >> i) & 1;
}

pyr_status_t pyr_field_init_input(pyr_field_t *field, const pyr_problem_t *problem, int i)
{
    const pyr_scheme_t *s = problem ? pyr_scheme_of(problem->equation) : NULL;
    if (!s || !field) return pyr_fail(PYR_ERR_ARG, "pyr_field_init_input: a field and a valid problem are required");
    if (i < 0 || i >= s->nfields || s->field[i].role != PYR_FIELD_INPUT || !s->init_input)
        return pyr_fail(PYR_ERR_ARG, "pyr_field_init_input: field %d of the %s scheme is not an input", i, s->name);
    return s->init_input(problem, i, field);
}
