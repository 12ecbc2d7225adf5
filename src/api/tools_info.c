/* What programs print about a plan and about the library beside the plan's
 * info struct: where the model's constants came from and what it predicts,
 * the kernels that are registered with their variants (`pyrgrid info`), and
 * the wisdom store's contents (`pyrgrid calibrate --show`). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/kernels.h"
#include "core/clock.h"
#include "core/error.h"
#include "plan/longvector.h"
#include "plan/model.h"
#include "plan/plan.h"
#include "schemes/scheme.h"
#include "tune/wisdom.h"

size_t pyr_plan_model_source(const pyr_plan_t *plan, char *text, size_t size)
{
    const int n = snprintf(text, size, "%s", plan ? plan->model_source : "");
    return n > 0 ? (size_t)n : 0;
}

int pyr_kernel_count(void)
{
    const pyr_kernel_t *const *k = NULL;
    return pyr_kernel_all(&k);
}

size_t pyr_kernel_describe(int i, char *text, size_t size)
{
    const pyr_kernel_t *const *k = NULL;
    const int nk = pyr_kernel_all(&k);
    if (i < 0 || i >= nk) {
        if (text && size) text[0] = '\0';
        return 0;
    }
    pyr_variant_t v2, v3;
    char d2[32], d3[32];
    k[i]->default_variant(2, PYR_FLOAT, &v2);
    k[i]->default_variant(3, PYR_FLOAT, &v3);
    pyr_variant_format(&v2, d2, sizeof d2);
    pyr_variant_format(&v3, d3, sizeof d3);
    const int n = snprintf(text, size, "%s on %s: run.kernel = %s; default 2D %s, 3D %s", pyr_equation_name(k[i]->equation),
                           pyr_backend_name(k[i]->backend), k[i]->help, d2, d3);
    return n > 0 ? (size_t)n : 0;
}

pyr_status_t pyr_plan_predict(const pyr_plan_t *plan, int64_t first_step, pyr_prediction_t *out)
{
    if (!plan || !out) return pyr_fail(PYR_ERR_ARG, "pyr_plan_predict: a plan and a prediction struct are required");
    pyr_model_prediction_t pr;
    PYR_TRY(pyr_model_predict(plan, pyr_plan_model(plan), pyr_plan_model_form(plan), first_step, &pr));
    memset(out, 0, sizeof *out);
    out->seconds = pr.seconds;
    out->upload = pr.upload;
    out->compute = pr.compute;
    out->download = pr.download;
    out->host = pr.host;
    return PYR_OK;
}

pyr_status_t pyr_wisdom_file_count(const char *path, int *nconstants, int *nchoices)
{
    if (!path) return pyr_fail(PYR_ERR_ARG, "pyr_wisdom_file_count: no path given");
    pyr_wisdom_t *w = malloc(sizeof *w);
    if (!w) return pyr_fail(PYR_ERR_NOMEM, "out of host memory reading %s", path);
    int found = 0;
    pyr_status_t st = pyr_wisdom_load(path, w, &found);
    if (st == PYR_OK) {
        if (nconstants) *nconstants = found ? w->nconstants : 0;
        if (nchoices) *nchoices = found ? w->nchoices : 0;
    }
    free(w);
    return st;
}

pyr_status_t pyr_wisdom_store_count(int *nconstants, int *nchoices)
{
    pyr_wisdom_t *w = malloc(sizeof *w);
    if (!w) return pyr_fail(PYR_ERR_NOMEM, "out of host memory copying the wisdom store");
    pyr_wisdom_store_get(w, NULL, 0, NULL, 0);
    if (nconstants) *nconstants = w->nconstants;
    if (nchoices) *nchoices = w->nchoices;
    free(w);
    return PYR_OK;
}

pyr_status_t pyr_wisdom_store_text(char **text)
{
    if (!text) return pyr_fail(PYR_ERR_ARG, "pyr_wisdom_store_text: text is NULL");
    *text = NULL;
    pyr_wisdom_t *w = malloc(sizeof *w);
    if (!w) return pyr_fail(PYR_ERR_NOMEM, "out of host memory copying the wisdom store");
    pyr_wisdom_store_get(w, NULL, 0, NULL, 0);
    pyr_status_t st = pyr_wisdom_to_text(w, text);
    free(w);
    return st;
}

int pyr_scheme_field_input(pyr_equation_t equation, int i)
{
    const pyr_scheme_t *s = pyr_scheme_of(equation);
    return s && i >= 0 && i < s->nfields && s->field[i].role == PYR_FIELD_INPUT;
}

pyr_status_t pyr_plan_longvector_model(const pyr_plan_t *plan, pyr_longvector_model_t *model)
{
    if (!plan || !model) return pyr_fail(PYR_ERR_ARG, "pyr_plan_longvector_model: a plan and a model struct are required");
    if (plan->method != PYR_METHOD_LONGVECTOR)
        return pyr_fail(PYR_ERR_ARG, "pyr_plan_longvector_model: the plan's method is %s, not longvector (run.method = longvector)",
                        pyr_method_name(plan->method));
    const pyr_lv_constants_t *k = &plan->model.lv;
    const size_t elem = pyr_precision_size(plan->problem.precision);
    memset(model, 0, sizeof *model);
    model->t_kernel = k->t_kernel;
    model->t_add = k->t_add;
    model->t_saxpy = k->t_saxpy;
    model->t_scal = k->t_scal;
    model->threads = k->threads;
    model->calls = PYR_LV_CALLS;
    model->adds = PYR_LV_ADDS;
    model->axpys = PYR_LV_AXPYS;
    model->scals = PYR_LV_SCALS;
    model->rise = PYR_LV_RISE;
    model->length = pyr_lv_plan_length(plan);
    model->pitch = plan->layout.pitch;
    model->align = plan->ops->pitch_align_bytes > 0 ? plan->ops->pitch_align_bytes / (int64_t)elem : 1;
    model->waves = pyr_lv_waves(model->length, k->threads);
    model->step_seconds = pyr_lv_step_seconds(k, model->length);
    return PYR_OK;
}

int pyr_longvector_staircase(double threads, int64_t align, int64_t n_lo, int64_t n_hi, int64_t *pos, int max)
{
    return pyr_lv_staircase(threads, align, n_lo, n_hi, pos, max);
}

double pyr_seconds_now(void) { return pyr_now_s(); }
