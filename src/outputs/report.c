/* Run reports and JSON descriptions (outputs/report.h). */
#include "outputs/report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/plugin.h"
#include "core/error.h"
#include "io/atomic.h"
#include "io/hdf5.h"
#include "plan/plan.h"
#include "problem/keys.h"

/* A key's value as a JSON number or string. */
static void value(pyr_json_t *j, const char *name, const char *text, int kind)
{
    if (kind == PYR_KEY_INT) {
        char *end;
        long long v = strtoll(text, &end, 10);
        if (!*end) {
            pyr_json_int(j, name, v);
            return;
        }
        unsigned long long u = strtoull(text, &end, 10);
        if (!*end) {
            pyr_json_uint(j, name, u);
            return;
        }
    } else if (kind == PYR_KEY_REAL) {
        pyr_json_real(j, name, strtod(text, NULL));
        return;
    }
    pyr_json_string(j, name, text);
}

void pyr_report_problem(pyr_json_t *j, const char *key, const pyr_problem_t *p)
{
    pyr_json_object(j, key);
    char section[16] = "", text[PYR_PATH_MAX + 64];
    for (int i = 0; pyr_problem_keys[i]; i++) {
        const char *full = pyr_problem_keys[i];
        if (!pyr_problem_key_applies(p, full)) continue;
        const char *dot = strchr(full, '.');
        size_t ls = (size_t)(dot - full);
        if (strlen(section) != ls || strncmp(section, full, ls) != 0) {
            if (section[0]) pyr_json_end(j);
            snprintf(section, sizeof section, "%.*s", (int)ls, full);
            pyr_json_object(j, section);
        }
        int kind;
        if (pyr_problem_value(p, full, text, sizeof text, &kind) == PYR_OK) value(j, dot + 1, text, kind);
    }
    if (section[0]) pyr_json_end(j);
    pyr_clear_error();
    pyr_json_end(j);
}

void pyr_report_options(pyr_json_t *j, const char *key, const pyr_options_t *o)
{
    pyr_json_object(j, key);
    char text[64];
    for (int i = 0; pyr_options_keys[i]; i++) {
        const char *full = pyr_options_keys[i];
        if (!strcmp(full, "run.block")) continue; /* the same value as rows: the piece's extent */
        int kind;
        if (pyr_options_value(o, full, text, sizeof text, &kind) == PYR_OK)
            value(j, !strcmp(full, "run.rows") ? "piece" : strchr(full, '.') + 1, text, kind);
    }
    pyr_json_end(j);
}

static void axes(pyr_json_t *j, const char *key, int dims, const int64_t v[3])
{
    pyr_json_array(j, key);
    for (int a = 0; a < dims; a++) pyr_json_int(j, NULL, v[a]);
    pyr_json_end(j);
}

static void counts(pyr_json_t *j, const char *key, const pyr_counters_t *c)
{
    pyr_json_object(j, key);
    pyr_json_uint(j, "uploaded", c->uploaded);
    pyr_json_uint(j, "downloaded", c->downloaded);
    pyr_json_uint(j, "computed", c->computed);
    pyr_json_uint(j, "redundant", c->redundant);
    pyr_json_end(j);
}

void pyr_report_plan_info(pyr_json_t *j, const pyr_plan_info_t *info, int dims)
{
    pyr_json_string(j, "method", info->method == PYR_METHOD_AUTO ? "mixed" : pyr_method_name(info->method));
    const int whole = info->method == PYR_METHOD_NAIVE || info->method == PYR_METHOD_LONGVECTOR; /* the grid resident, no pieces */
    pyr_json_string(j, "decomposition", whole ? "whole grid" : pyr_decomp_name(info->decomposition));
    pyr_json_string(j, "backend", pyr_backend_name(info->backend));
    pyr_json_string(j, "kernel", info->kernel);
    pyr_json_int(j, "height", info->height);
    pyr_json_int(j, "passes", info->passes);
    pyr_json_int(j, "tasks_per_pass", info->tasks_per_pass);
    axes(j, "pieces", dims, info->pieces); /* x, y, z */
    axes(j, "piece_extent", dims, info->piece_extent);
    axes(j, "result_extent", dims, info->result_extent);
    pyr_json_int(j, "slots", info->slots);
    pyr_json_int(j, "fields", info->fields);
    pyr_json_uint(j, "device_bytes", info->device_bytes);
    pyr_json_uint(j, "budget_bytes", info->budget_bytes);
    pyr_json_string(j, "host_memory", pyr_host_memory_name(info->host_memory));
    pyr_json_uint(j, "host_bytes", info->host_bytes);
    pyr_json_real(j, "redundancy", info->redundancy);
    counts(j, "counts", &info->counts);
}

void pyr_report_run(pyr_json_t *j, const char *key, const pyr_run_info_t *run)
{
    if (!run) {
        pyr_json_null(j, key);
        return;
    }
    pyr_json_object(j, key);
    pyr_json_int(j, "steps", run->steps);
    counts(j, "counts", &run->counts);
    pyr_json_bool(j, "checked", run->checked);
    if (run->checked) {
        pyr_json_real(j, "change", run->change);
        pyr_json_bool(j, "converged", run->converged);
    }
    /* method = multigrid: steps are its cycles, change its relative residual */
    if (run->mg_sweeps > 0) {
        pyr_json_int(j, "cycles", run->mg_cycles);
        pyr_json_real(j, "sweep_equivalents", run->mg_sweeps);
    }
    /* several devices or MPI ranks: the parts and their halo traffic (one part: 1 and zeros) */
    pyr_json_int(j, "parts", run->parts);
    pyr_json_int(j, "ranks", run->ranks);
    pyr_json_int(j, "exchange_height", run->exchange_height);
    pyr_json_int(j, "exchanges", run->exchanges);
    pyr_json_uint(j, "halo_sent", run->halo_sent);
    pyr_json_uint(j, "halo_received", run->halo_received);
    /* how the host grid was reached: pinned, staged (and why), none (no device copies) */
    pyr_json_string(j, "host_memory", pyr_host_memory_name(run->host_memory));
    pyr_json_real(j, "pin_seconds", run->pin_seconds);
    pyr_json_real(j, "unpin_seconds", run->unpin_seconds);
    pyr_json_string(j, "host_note", run->host_note);
    pyr_json_end(j);
}

void pyr_report_versions(pyr_json_t *j, const char *key)
{
    pyr_json_object(j, key);
    pyr_json_string(j, "pyrgrid", pyr_version());
#ifdef __VERSION__
    pyr_json_string(j, "compiler", __VERSION__);
#endif
    pyr_json_string(j, "hdf5", pyr_h5_available() ? pyr_h5_library_version() : NULL);
    pyr_json_bool(j, "cuda", pyr_cuda_built());
    pyr_json_end(j);
}

void pyr_report_machine(pyr_json_t *j, const char *key, pyr_backend_kind_t backend, int device)
{
    pyr_json_object(j, key);
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) != 0) host[0] = 0;
    pyr_json_string(j, "host", host);
    pyr_json_int(j, "cpu_threads", pyr_cpu_threads());
    int gpus = pyr_gpu_count();
    pyr_json_int(j, "gpus", gpus);
    if (backend == PYR_BACKEND_CUDA) {
        char text[256];
        if (pyr_gpu_describe(device, text, sizeof text) == PYR_OK) pyr_json_string(j, "gpu", text);
        else pyr_json_null(j, "gpu");
        pyr_clear_error();
    }
    pyr_json_end(j);
}

pyr_status_t pyr_report_write(const char *path, const char *json)
{
    pyr_atomic_file_t af;
    PYR_TRY(pyr_atomic_open(&af, path));
    fputs(json, af.fp);
    fputc('\n', af.fp);
    return pyr_atomic_commit(&af);
}

/* ------------------------------------------------------------- public API */

size_t pyr_report_finish(pyr_json_t *j, char *text, size_t size)
{
    const char *t = pyr_json_text(j);
    size_t n = pyr_json_copy_out(t ? t : "null", text, size);
    pyr_json_free(j);
    return n;
}

size_t pyr_problem_json(const pyr_problem_t *problem, char *text, size_t size)
{
    pyr_json_t j;
    pyr_json_init(&j, 0);
    if (problem) pyr_report_problem(&j, NULL, problem);
    else pyr_json_null(&j, NULL);
    return pyr_report_finish(&j, text, size);
}

size_t pyr_options_json(const pyr_options_t *options, char *text, size_t size)
{
    pyr_json_t j;
    pyr_json_init(&j, 0);
    if (options) pyr_report_options(&j, NULL, options);
    else pyr_json_null(&j, NULL);
    return pyr_report_finish(&j, text, size);
}

size_t pyr_run_info_json(const pyr_run_info_t *run, char *text, size_t size)
{
    pyr_json_t j;
    pyr_json_init(&j, 0);
    pyr_report_run(&j, NULL, run);
    return pyr_report_finish(&j, text, size);
}
