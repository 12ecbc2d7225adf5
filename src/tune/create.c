/* Plan creation: the backend and its context, the budget, the machine
 * constants from the process's wisdom, and the method, asked of the
 * registry's entries (methods/method.h), which make the automatic choices
 * (ESTIMATE from the model; MEASURE by timing and the wisdom's earlier
 * choices through the hooks lent here); measured choices are recorded in
 * the wisdom. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "backend/plugin.h"
#include "methods/method.h"
#include "plan/model.h"
#include "plan/planner.h"
#include "plan/skewed.h"
#include "tune/calibrate.h"
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

/* ------------------------------------------------- the automatic CPU budget */

/* The number after `key` in a file of "key value" lines (/proc/meminfo's
 * "MemAvailable:  123 kB", /proc/self/status, a cgroup's memory.stat), in
 * bytes (a "kB" unit is honoured).  0 when the file or the key is missing. */
static int read_keyed(const char *path, const char *key, uint64_t *out)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[256];
    const size_t kl = strlen(key);
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        if (strncmp(line, key, kl) || (line[kl] != ':' && line[kl] != ' ' && line[kl] != '\t')) continue;
        const char *v = line + kl + (line[kl] == ':');
        char *end;
        errno = 0;
        const unsigned long long x = strtoull(v, &end, 10);
        if (end == v || errno) break;
        while (*end == ' ' || *end == '\t') end++;
        *out = (uint64_t)x * (strncmp(end, "kB", 2) ? 1u : 1024u);
        found = 1;
    }
    fclose(f);
    return found;
}

/* The one number in a file (a cgroup's limit or usage); 0 when it is missing
 * or not a number ("max": no limit). */
static int read_number(const char *path, uint64_t *out)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    unsigned long long x = 0;
    const int ok = fscanf(f, "%llu", &x) == 1;
    fclose(f);
    if (ok) *out = (uint64_t)x;
    return ok;
}

typedef struct {
    uint64_t room;   /* the least memory left to this process by any limit (UINT64_MAX: none known) */
    char from[256];  /* that limit, with what is in use against it */
    uint64_t mapped; /* this process's address space now (0: not known) */
} host_room_t;

static void room_limit(host_room_t *r, uint64_t room, const char *fmt, ...) PYR_PRINTF(3, 4);
static void room_limit(host_room_t *r, uint64_t room, const char *fmt, ...)
{
    if (room >= r->room) return;
    r->room = room;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->from, sizeof r->from, fmt, ap);
    va_end(ap);
}

/* A cgroup's limit less what its tasks use (page cache that can be dropped
 * not counted), walking from this process's group up to the root: a
 * parent's limit binds too.  The unified hierarchy (cgroup2): memory.max;
 * the legacy memory controller: memory.limit_in_bytes. */
static void cgroup_room(host_room_t *r)
{
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f) return;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2) continue;
        *c2 = 0;
        const char *controllers = c1 + 1, *path = c2 + 1;
        const int v2 = !strcmp(line, "0") && !controllers[0];
        int v1 = 0;
        for (const char *c = controllers; !v2 && (c = strstr(c, "memory")); c += 6)
            if ((c == controllers || c[-1] == ',') && (c[6] == 0 || c[6] == ',')) v1 = 1;
        if (!v1 && !v2) continue;
        const char *base = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory";
        char dir[1024];
        snprintf(dir, sizeof dir, "%s", path);
        for (;;) {
            char file[1200];
            uint64_t limit = 0, usage = 0, inactive = 0;
            const char *d = strcmp(dir, "/") ? dir : "";
            snprintf(file, sizeof file, "%s%s/%s", base, d, v2 ? "memory.max" : "memory.limit_in_bytes");
            if (read_number(file, &limit) && limit < ((uint64_t)1 << 60)) {
                snprintf(file, sizeof file, "%s%s/%s", base, d, v2 ? "memory.current" : "memory.usage_in_bytes");
                read_number(file, &usage);
                snprintf(file, sizeof file, "%s%s/memory.stat", base, d);
                read_keyed(file, v2 ? "inactive_file" : "total_inactive_file", &inactive);
                const uint64_t used = usage > inactive ? usage - inactive : 0;
                char l[32], u[32];
                pyr_format_bytes(limit, l, sizeof l);
                pyr_format_bytes(used, u, sizeof u);
                room_limit(r, limit > used ? limit - used : 0, "%s%s/%s %s less %s in use", base, d,
                           v2 ? "memory.max" : "memory.limit_in_bytes", l, u);
            }
            char *slash = strrchr(dir, '/');
            if (!slash || !strcmp(dir, "/")) break;
            if (slash == dir) slash[1] = 0;
            else *slash = 0;
        }
    }
    fclose(f);
}

/* The memory this process can still take, and which limit sets it: the
 * least of the RAM the kernel can make available (MemAvailable), the
 * address-space and data-segment limits (ulimit -v, ulimit -d) less what is
 * mapped, and the cgroups' limits less their use. */
static void host_room(host_room_t *r)
{
    r->room = UINT64_MAX;
    r->from[0] = 0;
    r->mapped = 0;
    read_keyed("/proc/self/status", "VmSize", &r->mapped);
    uint64_t v = 0;
    char a[32], b[32];
    if (read_keyed("/proc/meminfo", "MemAvailable", &v)) {
        pyr_format_bytes(v, a, sizeof a);
        room_limit(r, v, "MemAvailable %s", a);
    } else if ((v = pyr_host_ram_bytes()) > 0) {
        pyr_format_bytes(v, a, sizeof a);
        room_limit(r, v, "the machine's %s of RAM", a);
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        const uint64_t used = r->mapped;
        pyr_format_bytes((uint64_t)rl.rlim_cur, a, sizeof a);
        pyr_format_bytes(used, b, sizeof b);
        room_limit(r, (uint64_t)rl.rlim_cur > used ? (uint64_t)rl.rlim_cur - used : 0, "ulimit -v %s less %s mapped", a, b);
    }
    if (getrlimit(RLIMIT_DATA, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        uint64_t used = 0;
        read_keyed("/proc/self/status", "VmData", &used);
        pyr_format_bytes((uint64_t)rl.rlim_cur, a, sizeof a);
        pyr_format_bytes(used, b, sizeof b);
        room_limit(r, (uint64_t)rl.rlim_cur > used ? (uint64_t)rl.rlim_cur - used : 0, "ulimit -d %s less %s in use", a, b);
    }
    cgroup_room(r);
}

/* method = auto and run.memory = auto on the CPU backend: the memory left,
 * the host fields' share of it, and the budget chosen. */
typedef struct {
    int active;         /* set by auto_cpu_budget when it chose the pyramid method */
    host_room_t r;
    uint64_t host;      /* the host fields of the problem (the caller's, or the program's to allocate) */
    uint64_t headroom;  /* kept free: an eighth of what is left, and 64 MiB */
    uint64_t usable;    /* r.room less the headroom */
} cpu_auto_t;

/* The automatic budget's pyramid plan failed: where the host fields alone
 * exceed the memory left, that is the message (the pieces' sizes are beside
 * the point); otherwise the budget's origin goes before the planner's. */
static pyr_status_t auto_cpu_failed(const pyr_plan_t *plan, const cpu_auto_t *a, pyr_status_t st, uint64_t budget)
{
    const pyr_problem_t *p = &plan->problem;
    char hb[32], left[32], hr[32], bud[32];
    pyr_format_bytes(a->host, hb, sizeof hb);
    pyr_format_bytes(a->r.room, left, sizeof left);
    pyr_format_bytes(a->headroom, hr, sizeof hr);
    pyr_format_bytes(budget, bud, sizeof bud);
    if (a->host > a->usable)
        return pyr_fail(PYR_ERR_NOMEM,
                        "the %lld x %lld x %lld %s grid's host fields need %s, more than the %s of memory this process can still take "
                        "(%s) less %s headroom; use fewer nodes%s, or run where more memory is free",
                        (long long)p->n[0], (long long)p->n[1], (long long)p->n[2], pyr_precision_name(p->precision), hb, left, a->r.from,
                        hr, p->precision == PYR_DOUBLE ? ", float precision (half the bytes)" : "");
    return pyr_fail_context(st, "run.memory = auto: a budget of %s, from the %s left (%s) less %s headroom and %s of host fields: ", bud,
                            left, a->r.from, hr, hb);
}

/* Naive keeps the grid's time layers in memory beside the host fields
 * (three grids for heat), so it is chosen only where all of them fit the
 * memory this process can still take, with headroom for the program's own
 * buffers and whatever else the machine runs; its budget is that room less
 * the host fields.  Otherwise the pyramid method in the cache-sized budget
 * it gets when asked for by name, or all the room left where no piece fits
 * that, with a notice saying why.  Host fields larger than the room left
 * and than all this process maps (so not allocated yet) fit no method:
 * PYR_ERR_NOMEM, before a planner would count the pieces of a grid that
 * cannot exist.  plan holds a naive build in an unlimited budget;
 * *naive_fits is set to 1 for naive. */
static pyr_status_t auto_cpu_budget(pyr_plan_t *plan, const pyr_decomp_t *cands, int ncand, uint64_t *budget, cpu_auto_t *a, int *naive_fits)
{
    *naive_fits = 1;
    memset(a, 0, sizeof *a);
    host_room(&a->r);
    if (a->r.room == UINT64_MAX) { /* nothing known about this machine's memory: naive, as before */
        *budget = UINT64_MAX;
        return PYR_OK;
    }
    const pyr_scheme_t *scheme = plan->scheme;
    const uint64_t nodes = (uint64_t)pyr_problem_nodes(&plan->problem), elem = pyr_precision_size(plan->problem.precision);
    for (int f = 0; f < scheme->nfields; f++)
        if (((plan->fields >> f) & 1) && scheme->field[f].role != PYR_FIELD_AUX) a->host += nodes * elem;
    a->headroom = a->r.room / 8 + ((uint64_t)64 << 20);
    a->usable = a->r.room > a->headroom ? a->r.room - a->headroom : 0;
    const uint64_t room = a->usable > a->host ? a->usable - a->host : 0, naive = plan->device_bytes;
    if (a->host + naive <= a->usable) {
        *budget = room;
        return PYR_OK;
    }
    *naive_fits = 0;
    a->active = 1;
    if (a->host > a->usable && a->host > a->r.mapped) return auto_cpu_failed(plan, a, PYR_ERR_NOMEM, 0);
    *budget = pyr_cpu_cache_budget(pyr_cpu_threads());
    if (room > *budget) {
        int fits = 0;
        for (int i = 0; i < ncand && !fits; i++) fits = pyr_plan_build(plan, PYR_METHOD_PYRAMID, cands[i], 1, *budget) == PYR_OK;
        pyr_clear_error();
        if (!fits) *budget = room;
    } else if (room > 0) {
        *budget = room;
    }
    char need[32], hb[32], db[32], left[32], hr[32], bud[32];
    pyr_format_bytes(a->host + naive, need, sizeof need);
    pyr_format_bytes(a->host, hb, sizeof hb);
    pyr_format_bytes(naive, db, sizeof db);
    pyr_format_bytes(a->r.room, left, sizeof left);
    pyr_format_bytes(a->headroom, hr, sizeof hr);
    pyr_format_bytes(*budget, bud, sizeof bud);
    pyr_plan_add_notice(plan,
                        "run.memory = auto: naive needs %s (host fields %s, its copies of the grid %s), more than the %s left (%s) "
                        "less %s headroom; pyramid within a budget of %s instead (or set run.memory)",
                        need, hb, db, left, a->r.from, hr, bud);
    return PYR_OK;
}

/* ------------------------------------------ what plan creation lends a method */

/* The wisdom and the machine's key behind the hooks of pyr_method_ctx_t. */
typedef struct {
    pyr_wisdom_t *wisdom;
    pyr_backend_kind_t kind;
    int have_wisdom;    /* the process's wisdom was consulted for this device */
    const char *device; /* its key ("" : none) */
    int given;          /* constants given by the caller: measured choices are not recorded */
} create_state_t;

static int known_choice(pyr_method_ctx_t *ctx, const pyr_plan_t *plan, pyr_method_known_t *out)
{
    const create_state_t *cs = ctx->user;
    if (!cs->have_wisdom || !cs->device[0]) return 0;
    char key[PYR_WISDOM_KEY];
    pyr_wisdom_problem_key(&plan->problem, &plan->options, ctx->budget, key, sizeof key);
    const pyr_wisdom_choice_t *k = pyr_wisdom_find_choice(cs->wisdom, cs->kind, cs->device, key);
    if (!k) return 0;
    out->decomp = k->decomp;
    out->height = k->height;
    out->slots = k->slots;
    snprintf(out->kernel, sizeof out->kernel, "%s", k->kernel);
    return 1;
}

/* The model source of a plan made with the caller's constants: its measured choices are not recorded. */
static const char given_source[] = "given constants";

/* A measured choice (decomposition, height, slots, the plan's variant) into the process's wisdom under
 * the plan's problem and budget; a program exports it (pyr_wisdom_export_file).  0 where nothing was
 * recorded: constants given by the caller, no device key, or the store refused (*why says which). */
static int record_choice(const pyr_plan_t *plan, pyr_backend_kind_t kind, const char *device, uint64_t budget, pyr_decomp_t decomp,
                         int64_t h, int slots, char *why, size_t wsize)
{
    why[0] = 0;
    if (!strcmp(plan->model_source, given_source)) return snprintf(why, wsize, "the plan's constants were given"), 0;
    if (!device[0]) return 0;
    char key[PYR_WISDOM_KEY];
    pyr_wisdom_problem_key(&plan->problem, &plan->options, budget, key, sizeof key);
    pyr_wisdom_choice_t ch;
    memset(&ch, 0, sizeof ch);
    ch.backend = kind;
    snprintf(ch.device, sizeof ch.device, "%s", device);
    snprintf(ch.version, sizeof ch.version, "%s", PYR_VERSION_STRING);
    snprintf(ch.problem, sizeof ch.problem, "%s", key);
    ch.decomp = decomp;
    ch.height = h;
    ch.slots = slots;
    pyr_variant_format(&plan->variant, ch.kernel, sizeof ch.kernel);
    const int ok = pyr_wisdom_store_put_choice(&ch) == PYR_OK;
    if (!ok) snprintf(why, wsize, "%s", pyr_last_error());
    pyr_clear_error();
    return ok;
}

/* plan = measure: time the model's best candidates (tune/measure.c) and record the winner in the process's wisdom. */
static pyr_status_t measure_choice(pyr_method_ctx_t *ctx, pyr_plan_t *plan, pyr_decomp_t *decomp, int64_t *h, int *slots)
{
    const create_state_t *cs = ctx->user;
    PYR_TRY(pyr_tune_measure_best(plan, &ctx->seen, ctx->budget, decomp, h, slots));
    plan->try_slots = *slots;
    if (cs->given || !cs->device[0]) return PYR_OK;
    char why[1024];
    if (record_choice(plan, cs->kind, cs->device, ctx->budget, *decomp, *h, plan->try_slots, why, sizeof why))
        pyr_plan_add_notice(plan, "measured: %s, height %lld (recorded in the wisdom)", pyr_decomp_name(*decomp), (long long)*h);
    else
        pyr_plan_add_notice(plan, "measured: %s, height %lld (not recorded: %s)", pyr_decomp_name(*decomp), (long long)*h, why);
    return PYR_OK;
}

pyr_status_t pyr_tune_record_choice(const pyr_plan_t *plan, pyr_decomp_t decomp, int64_t h, int slots, char *why, size_t size)
{
    char device[PYR_WISDOM_KEY];
    if (pyr_wisdom_device(plan->ops->kind, plan->options.device, plan->options.threads, device, sizeof device) != PYR_OK) {
        snprintf(why, size, "%s", pyr_last_error());
        pyr_clear_error();
        return PYR_ERR_UNSUPPORTED;
    }
    if (!record_choice(plan, plan->ops->kind, device, plan->budget, decomp, h, slots, why, size))
        return why[0] ? PYR_ERR_UNSUPPORTED : (snprintf(why, size, "no device key for the wisdom"), PYR_ERR_UNSUPPORTED);
    return PYR_OK;
}

/* The decompositions a method weighs for a plan: the one asked for, or those that apply, and skewed pieces where the scheme allows. */
static void weigh_decomps(pyr_plan_t *plan, pyr_method_ctx_t *mc)
{
    mc->ncand = pyr_plan_decomp_candidates(&plan->problem, plan->options.decomposition, mc->cands);
    if (plan->options.decomposition == PYR_DECOMP_AUTO && pyr_skew_eligible(plan, NULL, 0)) mc->cands[mc->ncand++] = PYR_DECOMP_SKEWED;
}

pyr_status_t pyr_tune_refine_candidates(const pyr_plan_t *plan, candidate_t *pick, int max, int *n)
{
    *n = 0;
    for (int i = 0; i < plan->refine.n && i < max; i++) {
        const candidate_t c = {plan->refine.decomp[i], plan->refine.height[i], plan->refine.slots[i], 0};
        pick[(*n)++] = c;
    }
    return PYR_OK;
}

/* plan = refine: the model's best few candidates, named in the notice for the run to try, where the
 * model chose a pyramid plan; otherwise (the wisdom's choice, the options fixed it, another method) the
 * plan keeps the mode estimate: its run tries nothing. */
static void refine_names(pyr_plan_t *plan, const pyr_method_entry_t *m, const pyr_method_choice_t *choice, pyr_method_ctx_t *mc)
{
    candidate_t pick[PYR_REFINE_MAX];
    const candidate_t first = {plan->decomp, plan->height, plan->slots, choice->seconds};
    const int n = m->id == PYR_METHOD_PYRAMID && choice->modelled ? pyr_tune_refine_pick(&mc->seen, &first, pick, PYR_REFINE_MAX) : 0;
    for (int i = 0; i < n; i++) {
        plan->refine.decomp[i] = pick[i].decomp;
        plan->refine.height[i] = pick[i].height;
        plan->refine.slots[i] = pick[i].slots;
    }
    plan->refine.n = n;
    if (n < 2) {
        plan->options.plan_mode = PYR_PLAN_ESTIMATE;
        if (m->id == PYR_METHOD_PYRAMID && choice->modelled)
            pyr_plan_add_notice(plan, "refine: the model sees one candidate only, so the run tries nothing");
        return;
    }
    int64_t len[PYR_REFINE_MAX];
    int k = n;
    char list[400] = "", why[1024];
    if (!pyr_tune_refine_layout(plan, pick, &k, len, why, sizeof why)) {
        plan->options.plan_mode = PYR_PLAN_ESTIMATE;
        pyr_plan_add_notice(plan, "refine: %.400s; the run keeps the model's choice", why);
        return;
    }
    pyr_tune_refine_list(pick, k, list, sizeof list);
    pyr_plan_add_notice(plan, "refine: candidates %s (the run's first passes try each, then the fastest runs the rest)", list);
    plan->refine.n = k;
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
    if (opt.plan_mode != PYR_PLAN_ESTIMATE && opt.plan_mode != PYR_PLAN_MEASURE && opt.plan_mode != PYR_PLAN_REFINE)
        return pyr_fail(PYR_ERR_CONFIG, "plan mode %d: use estimate, measure or refine", (int)opt.plan_mode);
    if (opt.plan_mode == PYR_PLAN_REFINE && (problem->whole[0] > 0 || problem->whole[1] > 0 || problem->whole[2] > 0))
        return pyr_fail(PYR_ERR_UNSUPPORTED,
                        "run.plan = refine changes the plan between the passes of a run on one device; over several devices or MPI "
                        "ranks the parts' passes meet at every halo exchange, and no part may change its plan alone: use run.plan = "
                        "estimate or measure there (or one device)");
    if (opt.decomposition != PYR_DECOMP_AUTO) PYR_TRY(pyr_plan_check_decomp(problem, opt.decomposition));
    /* the method asked for (NULL: auto); every method's own refusals, and what a method implies (the long-vector variant) */
    const pyr_method_entry_t *forced = pyr_method_find(opt.method);
    if (opt.method != PYR_METHOD_AUTO && !forced)
        return pyr_fail(PYR_ERR_CONFIG, "method %d: use auto, naive, trivial, pyramid, longvector or multigrid", (int)opt.method);
    PYR_TRY(pyr_methods_check(problem, &opt));
    forced = pyr_method_find(opt.method); /* a check may set what the problem implies (iteration = multigrid) */

    pyr_plan_t *plan = calloc(1, sizeof *plan);
    pyr_wisdom_t *wisdom = malloc(sizeof *wisdom);
    pyr_method_ctx_t mc;
    memset(&mc, 0, sizeof mc);
    cpu_auto_t cpu_auto = {.active = 0};
    uint64_t budget = opt.memory;
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
        if (kind == PYR_BACKEND_CPU && pyr_cuda_built()) pyr_plan_add_notice(plan, "no usable GPU found; running on the CPU backend");
    }
    if (forced && forced->device && (st = forced->device(kind)) != PYR_OK) {
        free(wisdom);
        pyr_plan_free(&plan);
        return st;
    }
    plan->ops = runtime ? runtime : pyr_device_get(kind);
    if (runtime && runtime->kind != kind) {
        free(wisdom);
        pyr_plan_free(&plan);
        return pyr_fail(PYR_ERR_ARG, "pyr_plan_create_on: a runtime of another backend than run.backend");
    }
    if (!plan->ops) {
        free(wisdom);
        pyr_plan_free(&plan);
        return pyr_fail(PYR_ERR_NODEVICE, "backend = cuda: %s", pyr_cuda_missing());
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
    /* method and budget both left to choose on the CPU: set with the method, from the host's memory (auto_cpu_budget) */
    const int auto_cpu = budget == 0 && kind == PYR_BACKEND_CPU && opt.method == PYR_METHOD_AUTO;
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
        snprintf(plan->model_source, sizeof plan->model_source, "%s", given_source);
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

    /* Method: the entry asked for, or for method = auto the first automatic entry of the registry that
     * fits the budget (naive where the whole grid fits, else pyramid); the entry chooses its decomposition
     * and height and builds the plan (methods/method.h). */
    /* pieces leaning back in time where the scheme allows (plan/skewed.h): the model weighs them beside the others */
    weigh_decomps(plan, &mc);
    mc.budget = budget;
    create_state_t cs = {wisdom, kind, have_wisdom, device, given != NULL};
    mc.known = known_choice;
    mc.measure = measure_choice;
    mc.user = &cs;
    const pyr_method_entry_t *m = forced;
    char passed[512] = ""; /* method = auto: the automatic entries passed over, and why */
    pyr_refusal_t passed_least = {PYR_OK, 0, ""}; /* and of those refused for the budget, the least need */
    for (int i = 0; !m && i < pyr_method_count(); i++) {
        const pyr_method_entry_t *e = pyr_method_at(i);
        if (!e->automatic) continue;
        if (!e->fits) {
            m = e;
            break;
        }
        st = e->fits(plan, &mc);
        if (st == PYR_OK && auto_cpu) {
            /* the budget, unknown until now, from the memory the host fields leave (auto_cpu_budget) */
            int fits_host = 1;
            st = auto_cpu_budget(plan, mc.cands, mc.ncand, &budget, &cpu_auto, &fits_host);
            if (st != PYR_OK) goto fail;
            plan->budget = mc.budget = budget;
            if (!fits_host) st = pyr_fail(PYR_ERR_BUDGET, "the grid and the host fields need more than the memory left");
        }
        if (st == PYR_OK) {
            m = e;
            break;
        }
        pyr_refusal_note(&passed_least, plan, st);
        const size_t n = strlen(passed);
        snprintf(passed + n, sizeof passed - n, "%snot %s: %s", n ? "; " : "", e->name, pyr_last_error());
        pyr_clear_error();
        st = PYR_OK;
    }
    pyr_method_choice_t choice;
    memset(&choice, 0, sizeof choice);
    if (!m) {
        st = pyr_fail(PYR_ERR_UNSUPPORTED, "no method fits this problem: %s", passed);
        goto fail;
    }
    st = m->choose(plan, &mc, &choice);
    if (st == PYR_OK) st = m->build(plan, &mc, &choice);
    if (st == PYR_ERR_BUDGET && passed_least.need && (!plan->refused_bytes || passed_least.need < plan->refused_bytes)) {
        /* an entry passed over needs less memory than the one taken: name both, so the least budget that plans is named */
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", pyr_last_error());
        st = pyr_fail(st, "no method fits the budget: %s; not %s: %s", passed, m->name, msg);
    }
    if (st == PYR_OK) {
        const char *asked = forced ? "asked for" : "auto";
        if (passed[0]) snprintf(plan->method_why, sizeof plan->method_why, "%s (%s; %.400s): %.255s", m->name, asked, passed, choice.why);
        else snprintf(plan->method_why, sizeof plan->method_why, "%s (%s): %s", m->name, asked, choice.why);
    }
    const int modelled = choice.modelled;
    if (st != PYR_OK) goto fail;
    if (opt.plan_mode == PYR_PLAN_REFINE) refine_names(plan, m, &choice, &mc);
    pyr_plan_host_memory(plan);
    if (modelled && why[0] && opt.plan_mode == PYR_PLAN_ESTIMATE)
        pyr_plan_add_notice(plan, "%s; the model uses default constants, so the choice of %s may be off: run 'pyrgrid calibrate'", why,
                   opt.height == 0 ? "height" : "decomposition");
    free(mc.seen.c);
    free(wisdom);
    *out = plan;
    return PYR_OK;
fail:
    if (cpu_auto.active && st == PYR_ERR_BUDGET) st = auto_cpu_failed(plan, &cpu_auto, st, budget);
    free(mc.seen.c);
    free(wisdom);
    pyr_plan_free(&plan);
    return st;
}

pyr_status_t pyr_plan_create_one(const pyr_problem_t *problem, const pyr_options_t *options, pyr_plan_t **out)
{
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
