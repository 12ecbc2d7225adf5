/* Plan creation: the backend and its context, the budget, the machine
 * constants from the process's wisdom, the method, and the automatic
 * choices (ESTIMATE from the model, MEASURE by timing); measured choices are
 * recorded in the wisdom. */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/parts.h"
#include "plan/model.h"
#include "plan/planner.h"
#include "plan/skewed.h"
#include "tune/calibrate.h"
#include "tune/longvector.h"
#include "tune/tune.h"
#include "tune/wisdom.h"

/* The machine constants: from the process's wisdom (pyr_wisdom_import_file;
 * no file is read here) when it has them for this device, scheme, precision
 * and dimension, else the documented defaults.  *why gets what a person
 * should hear when the defaults are used; *kernel the variant the record
 * names ("" for the kernel's default). */
static void load_model(pyr_plan_t *plan, pyr_wisdom_t *w, int *have_wisdom, char *device, size_t dsize, char *why, size_t wsize,
                       char *kernel, size_t ksize)
{
    const pyr_problem_t *p = &plan->problem;
    kernel[0] = 0;
    plan->model = pyr_model_default(plan->ops->kind, p->dims, p->precision);
    plan->model_form = PYR_MODEL_AUTO;
    snprintf(plan->model_source, sizeof plan->model_source, "default constants");
    *have_wisdom = 0;
    why[0] = 0;
    if (pyr_wisdom_device(plan->ops->kind, plan->options.device, plan->options.threads, device, dsize) != PYR_OK) {
        snprintf(why, wsize, "%s", pyr_last_error());
        pyr_clear_error();
        device[0] = 0;
        return;
    }
    char source[PYR_PATH_MAX], rejected[1024];
    pyr_wisdom_store_get(w, source, sizeof source, rejected, sizeof rejected);
    *have_wisdom = 1;
    const pyr_wisdom_constants_t *c = pyr_wisdom_find_constants(w, plan->ops->kind, device, plan->scheme->name, p->precision, p->dims);
    if (c) {
        plan->model = c->k;
        snprintf(kernel, ksize, "%s", c->kernel);
        snprintf(plan->model_source, sizeof plan->model_source, "calibrated, from %s", source);
        return;
    }
    if (rejected[0]) snprintf(why, wsize, "%s", rejected);
    else
        snprintf(why, wsize, "no calibration of the %s backend (%s, %s, %s, %dD) in the wisdom (%s)", plan->ops->name, device,
                 plan->scheme->name, pyr_precision_name(p->precision), p->dims, source);
}

static void note_defaults(pyr_plan_t *plan, const char *why)
{
    if (why[0]) snprintf(plan->model_source, sizeof plan->model_source, "default constants (%s; run 'pyrgrid calibrate')", why);
}

/* runtime: the device runtime to plan on (NULL: the backend's own, by kind). */
static pyr_status_t create_plan(const pyr_problem_t *problem, const pyr_options_t *options, const pyr_model_constants_t *given,
                                pyr_model_form_t form, const pyr_device_ops_t *runtime, pyr_plan_t **out)
{
    *out = NULL;
    PYR_TRY(pyr_problem_validate(problem));
    pyr_options_t opt;
    if (options) opt = *options;
    else pyr_options_default(&opt);
    if (opt.height < 0) return pyr_fail(PYR_ERR_CONFIG, "run.height = %lld: use a height >= 1 (or auto)", (long long)opt.height);
    if (opt.piece < 0) return pyr_fail(PYR_ERR_CONFIG, "piece size %lld: use a positive size (or auto)", (long long)opt.piece);
    if (opt.snapshot_every < 0) return pyr_fail(PYR_ERR_CONFIG, "output.every must be >= 0");
    if (opt.threads < 0) return pyr_fail(PYR_ERR_CONFIG, "run.threads = %d: use 0 (all cores) or a positive count", opt.threads);
    if (opt.plan_mode != PYR_PLAN_ESTIMATE && opt.plan_mode != PYR_PLAN_MEASURE)
        return pyr_fail(PYR_ERR_CONFIG, "plan mode %d: use estimate or measure", (int)opt.plan_mode);
    if (opt.decomposition != PYR_DECOMP_AUTO) PYR_TRY(pyr_plan_check_decomp(problem, opt.decomposition));
    /* the long-vector method: naive's resident piece stepped by the heat kernel's variant longvector */
    PYR_TRY(pyr_longvector_check(problem, &opt));
    if (opt.method == PYR_METHOD_LONGVECTOR) snprintf(opt.kernel, sizeof opt.kernel, "longvector");

    pyr_plan_t *plan = calloc(1, sizeof *plan);
    pyr_wisdom_t *wisdom = malloc(sizeof *wisdom);
    candidates_t seen = {NULL, 0, 0};
    if (!plan || !wisdom) {
        free(plan);
        free(wisdom);
        return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
    }
    plan->problem = *problem;
    plan->options = opt;
    pyr_status_t st = pyr_plan_set_scheme(plan);
    if (st != PYR_OK) goto fail;

    /* Backend. */
    pyr_backend_kind_t kind = opt.backend;
    if (kind == PYR_BACKEND_AUTO) {
        kind = pyr_backend_available(PYR_BACKEND_CUDA) ? PYR_BACKEND_CUDA : PYR_BACKEND_CPU;
        if (kind == PYR_BACKEND_CPU && pyr_device_get(PYR_BACKEND_CUDA)) pyr_plan_add_notice(plan, "no usable GPU found; running on the CPU backend");
    }
    if (opt.method == PYR_METHOD_LONGVECTOR && (kind != PYR_BACKEND_CUDA || !pyr_backend_available(PYR_BACKEND_CUDA))) {
        free(wisdom);
        pyr_plan_destroy(&plan);
        return pyr_longvector_check_backend(pyr_device_get(PYR_BACKEND_CUDA) != NULL);
    }
    plan->ops = runtime ? runtime : pyr_device_get(kind);
    if (runtime && runtime->kind != kind) {
        free(wisdom);
        pyr_plan_destroy(&plan);
        return pyr_fail(PYR_ERR_ARG, "pyr_plan_create_on: a runtime of another backend than run.backend");
    }
    if (!plan->ops) {
        free(wisdom);
        pyr_plan_destroy(&plan);
        return pyr_fail(PYR_ERR_NODEVICE,
                        "backend = cuda: this pyrgrid was built without CUDA (no CUDA compiler at build time); "
                        "rebuild on a machine with nvcc, or use backend = cpu");
    }
    plan->kernel = pyr_kernel_find(problem->equation, kind);
    if (!plan->kernel) {
        st = pyr_fail(PYR_ERR_UNSUPPORTED, "the %s backend has no kernel for the %s equation; use another backend", plan->ops->name,
                      plan->scheme->name);
        goto fail;
    }
    st = pyr_kernel_variant(plan->kernel, opt.kernel, problem->dims, problem->precision, &plan->variant);
    if (st != PYR_OK) goto fail;
    st = plan->ops->create(&opt, problem->precision, &plan->ctx);
    if (st != PYR_OK) goto fail;

    /* Budget. */
    uint64_t budget = opt.memory;
    if (budget == 0) {
        if (kind == PYR_BACKEND_CPU) {
            budget = opt.method == PYR_METHOD_NAIVE || opt.method == PYR_METHOD_AUTO ? UINT64_MAX
                                                                                     : pyr_cpu_cache_budget(pyr_cpu_threads());
        } else {
            uint64_t fr = 0, total = 0;
            st = plan->ops->mem_info(plan->ctx, &fr, &total);
            if (st != PYR_OK) goto fail;
            uint64_t margin = total / 32 > (256ull << 20) ? total / 32 : (256ull << 20);
            budget = fr > margin ? fr - margin : 0;
        }
    } else if (kind != PYR_BACKEND_CPU) {
        uint64_t fr = 0, total = 0;
        st = plan->ops->mem_info(plan->ctx, &fr, &total);
        if (st != PYR_OK) goto fail;
        if (budget > fr) {
            char want[32], have[32];
            pyr_format_bytes(budget, want, sizeof want);
            pyr_format_bytes(fr, have, sizeof have);
            st = pyr_fail(PYR_ERR_DEVICE_NOMEM, "run.memory = %s is more than the %s of device memory free on GPU %d; "
                          "use memory <= %s, or memory = auto", want, have, opt.device, have);
            goto fail;
        }
    }
    plan->budget = budget;
    if (opt.slots < 0 || opt.slots > plan->ops->slots) {
        st = pyr_fail(PYR_ERR_CONFIG, "run.slots = %d: the %s backend keeps 1 to %d pieces in flight; use one of those (or auto)", opt.slots,
                      plan->ops->name, plan->ops->slots);
        goto fail;
    }
    plan->try_slots = pyr_plan_requested_slots(plan);

    /* Model constants. */
    char device[PYR_WISDOM_KEY] = "", why[PYR_PATH_MAX + 256] = "", wise_kernel[32] = "";
    int have_wisdom = 0;
    if (given) {
        plan->model = *given;
        plan->model_form = form;
        snprintf(plan->model_source, sizeof plan->model_source, "given constants");
        pyr_wisdom_init(wisdom);
    } else {
        load_model(plan, wisdom, &have_wisdom, device, sizeof device, why, sizeof why, wise_kernel, sizeof wise_kernel);
        note_defaults(plan, why);
        /* the variant calibration found fastest on this machine, unless the caller chose one */
        if (!opt.kernel[0] && wise_kernel[0] &&
            pyr_kernel_variant(plan->kernel, wise_kernel, problem->dims, problem->precision, &plan->variant) != PYR_OK) {
            pyr_clear_error();
            pyr_kernel_variant(plan->kernel, "", problem->dims, problem->precision, &plan->variant);
        }
    }

    /* Method. */
    pyr_decomp_t cands[3];
    int ncand = pyr_plan_decomp_candidates(problem, opt.decomposition, cands);
    /* pieces leaning back in time where the scheme allows (plan/skewed.h): the model weighs them beside the others */
    if (opt.decomposition == PYR_DECOMP_AUTO && pyr_skew_eligible(plan, NULL, 0)) cands[ncand++] = PYR_DECOMP_SKEWED;
    pyr_method_t method = opt.method;
    if (method == PYR_METHOD_AUTO) {
        st = pyr_plan_build(plan, PYR_METHOD_NAIVE, cands[0], 1, budget);
        method = st == PYR_OK ? PYR_METHOD_NAIVE : PYR_METHOD_PYRAMID;
        pyr_clear_error();
        st = PYR_OK;
    }
    int modelled = 0; /* a choice was made from the model */
    pyr_decomp_t decomp = cands[0];
    if (method == PYR_METHOD_NAIVE || method == PYR_METHOD_LONGVECTOR) {
        /* Steps per compute call, progress reported between them: height when given, else about 100 in whole
         * launches of the kernel (launch_steps): 98 for a kernel of seven steps per launch, 99 for eleven.  A call
         * of 100 would cut into launches of 7 and 5 or of 11 and 9 steps (backend/launch_split.h: odd sizes),
         * and shallower launches run slower (H200, 2D double 4096 x 16384: seven steps 889 Gcell/s, five 813;
         * bench/NOTES-cuda.md v15). */
        int64_t chunk = opt.height;
        if (chunk <= 0) {
            const int k = pyr_plan_launch_steps(plan);
            chunk = k > 1 && k <= 100 ? 100 / k * k : 100;
        }
        if (chunk > problem->steps) chunk = problem->steps;
        st = pyr_plan_build(plan, method, decomp, chunk > 0 ? chunk : 1, budget);
        if (st == PYR_OK && method == PYR_METHOD_LONGVECTOR) pyr_longvector_constants(plan);
    } else if (method == PYR_METHOD_TRIVIAL) {
        if (opt.height > 1) {
            st = pyr_fail(PYR_ERR_CONFIG, "method = trivial streams every step (height 1); height = %lld asks for the pyramid method",
                          (long long)opt.height);
            goto fail;
        }
        double best = INFINITY;
        for (int i = 0; i < ncand; i++) {
            double s;
            if (pyr_plan_predict_with(plan, PYR_METHOD_TRIVIAL, cands[i], 1, budget, &s) == PYR_OK && s < best) {
                best = s;
                decomp = cands[i];
            }
        }
        modelled = ncand > 1;
        pyr_clear_error();
        st = pyr_plan_build(plan, PYR_METHOD_TRIVIAL, decomp, 1, budget);
    } else {
        int64_t h = opt.height;
        /* slots = auto where the backend keeps more than two in flight: two larger pieces are weighed too,
         * by measurement (plan = measure), and for skewed pieces by the model as well.  The model's pipeline
         * of two slots has run 10-20% slower than predicted on the H200 in every session for the other
         * decompositions (bench/NOTES-cuda.md v7: strips h128 232 ms per pass with two slots, 200 with three,
         * predicted the other way round), so their estimates keep three; a skewed pass ranks its slots as
         * measured (v18: 2D float in 1 GiB two slots 1668 Gcell/s against 1601, predicted 1941 / 1926;
         * 3D float best two at h64 370 against three at h48 356, predicted 382 / 377). */
        const int measuring = opt.plan_mode == PYR_PLAN_MEASURE;
        int skew_cand = 0;
        for (int i = 0; i < ncand; i++) skew_cand |= cands[i] == PYR_DECOMP_SKEWED;
        int weigh_slots = opt.slots == 0 && plan->ops->default_slots > 2 && (measuring || skew_cand);
        const pyr_wisdom_choice_t *known = NULL;
        char key[PYR_WISDOM_KEY];
        pyr_wisdom_problem_key(problem, &opt, budget, key, sizeof key);
        if (h == 0 && have_wisdom && device[0]) known = pyr_wisdom_find_choice(wisdom, kind, device, key);
        if (known && opt.slots == 0 && known->slots > 0 && known->slots <= plan->ops->slots) plan->try_slots = known->slots;
        if (known && known->height <= (problem->steps > 0 ? problem->steps : 1) &&
            (opt.slots == 0 || known->slots == 0 || known->slots == opt.slots) &&
            pyr_plan_build(plan, PYR_METHOD_PYRAMID, known->decomp, known->height, budget) == PYR_OK &&
            (opt.decomposition == PYR_DECOMP_AUTO || opt.decomposition == known->decomp)) {
            decomp = known->decomp;
            h = known->height;
            if (!opt.kernel[0] && known->kernel[0] &&
                pyr_kernel_variant(plan->kernel, known->kernel, problem->dims, problem->precision, &plan->variant) != PYR_OK)
                pyr_clear_error(); /* keep the variant chosen before */
            pyr_plan_add_notice(plan, "%s, height %lld: measured earlier on this machine (wisdom)", pyr_decomp_name(decomp), (long long)h);
        } else if (h == 0 || ncand > 1 || weigh_slots) {
            pyr_clear_error();
            plan->try_slots = pyr_plan_requested_slots(plan);
            double best = INFINITY;
            int64_t best_h = 0;
            int best_slots = plan->try_slots;
            char first_error[1024] = "";
            /* slots = auto: the backend's most, or two (larger pieces, less
             * overlap) when the model predicts that faster */
            int slot_cands[2] = {plan->try_slots, 2}, nslot = weigh_slots ? 2 : 1;
            for (int si_ = 0; si_ < nslot; si_++) {
                plan->try_slots = slot_cands[si_];
                for (int i = 0; i < ncand; i++) {
                    if (si_ > 0 && !measuring && cands[i] != PYR_DECOMP_SKEWED) continue;
                    int64_t hh = h;
                    double s = INFINITY;
                    pyr_status_t si;
                    if (h == 0) si = pyr_plan_search_height(plan, cands[i], budget, &hh, &s, &seen);
                    else si = pyr_plan_predict_with(plan, PYR_METHOD_PYRAMID, cands[i], h, budget, &s);
                    if (si != PYR_OK) {
                        /* keep the message of the smallest pieces tried (two slots when auto) */
                        if (!first_error[0] || (i == 0 && si_ == nslot - 1)) snprintf(first_error, sizeof first_error, "%s", pyr_last_error());
                        if (i == 0) st = si;
                        continue;
                    }
                    if (h != 0 && (st = pyr_plan_note_candidate(&seen, cands[i], hh, plan->try_slots, s)) != PYR_OK) goto fail;
                    if (s < best) {
                        best = s;
                        best_h = hh;
                        best_slots = plan->try_slots;
                        decomp = cands[i];
                    }
                }
            }
            plan->try_slots = best_slots;
            if (best_h == 0) {
                st = pyr_fail(st != PYR_OK ? st : PYR_ERR_BUDGET, "%s", first_error);
                goto fail;
            }
            pyr_clear_error();
            st = PYR_OK;
            h = best_h;
            modelled = 1;
            if (opt.plan_mode == PYR_PLAN_MEASURE && seen.n > 1) {
                int ms = plan->try_slots;
                st = pyr_tune_measure_best(plan, &seen, budget, &decomp, &h, &ms);
                if (st != PYR_OK) goto fail;
                plan->try_slots = ms;
                if (!given && device[0]) {
                    pyr_wisdom_choice_t ch;
                    memset(&ch, 0, sizeof ch);
                    ch.backend = kind;
                    snprintf(ch.device, sizeof ch.device, "%s", device);
                    snprintf(ch.version, sizeof ch.version, "%s", PYR_VERSION_STRING);
                    snprintf(ch.problem, sizeof ch.problem, "%s", key);
                    ch.decomp = decomp;
                    ch.height = h;
                    ch.slots = plan->try_slots;
                    pyr_variant_format(&plan->variant, ch.kernel, sizeof ch.kernel);
                    /* into the process's wisdom; a program exports it (pyr_wisdom_export_file) */
                    if (pyr_wisdom_store_put_choice(&ch) == PYR_OK)
                        pyr_plan_add_notice(plan, "measured: %s, height %lld (recorded in the wisdom)", pyr_decomp_name(decomp), (long long)h);
                    else
                        pyr_plan_add_notice(plan, "measured: %s, height %lld (not recorded: %s)", pyr_decomp_name(decomp), (long long)h,
                                   pyr_last_error());
                    pyr_clear_error();
                }
            }
        }
        if (problem->steps > 0 && h > problem->steps) h = problem->steps;
        st = pyr_plan_build(plan, PYR_METHOD_PYRAMID, decomp, h, budget);
    }
    if (st != PYR_OK) goto fail;
    pyr_plan_host_memory(plan);
    if (modelled && why[0] && opt.plan_mode == PYR_PLAN_ESTIMATE)
        pyr_plan_add_notice(plan, "%s; the model uses default constants, so the choice of %s may be off: run 'pyrgrid calibrate'", why,
                   opt.height == 0 ? "height" : "decomposition");
    free(seen.c);
    free(wisdom);
    *out = plan;
    return PYR_OK;
fail:
    free(seen.c);
    free(wisdom);
    pyr_plan_destroy(&plan);
    return st;
}

pyr_status_t pyr_plan_create(const pyr_problem_t *problem, const pyr_options_t *options, pyr_plan_t **out)
{
    /* run.devices: a plan per part of the grid (exec/parts.c, issue 25) */
    if (options && options->devices[0]) {
        /* the long-vector method's own refusals (scheme, dims, backend, options) before the parts' */
        *out = NULL;
        if (problem) PYR_TRY(pyr_longvector_check(problem, options));
        return pyr_parts_plan_create(problem, options, out);
    }
    return create_plan(problem, options, NULL, PYR_MODEL_AUTO, NULL, out);
}

pyr_status_t pyr_plan_create_with_model(const pyr_problem_t *problem, const pyr_options_t *options, const pyr_model_constants_t *k,
                                        pyr_model_form_t form, pyr_plan_t **out)
{
    if (!k) return pyr_fail(PYR_ERR_ARG, "pyr_plan_create_with_model: constants required");
    return create_plan(problem, options, k, form, NULL, out);
}

pyr_status_t pyr_plan_create_on(const pyr_problem_t *problem, const pyr_options_t *options, const pyr_device_ops_t *runtime,
                                const pyr_model_constants_t *k, pyr_model_form_t form, pyr_plan_t **out)
{
    if (!k || !runtime) return pyr_fail(PYR_ERR_ARG, "pyr_plan_create_on: constants and a runtime required");
    return create_plan(problem, options, k, form, runtime, out);
}
