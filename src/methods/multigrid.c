/* The multigrid method (see method.h): Poisson problems with scheme.iteration
 * = multigrid, solved on one device by the level loop of solvers/multigrid/
 * (the finest levels streamed from host memory where they do not fit the
 * budget).  It takes no pieces, passes, heights or kernel
 * variants; its plan is the naive method's resident description with the
 * hierarchy's memory as the device's, and its run is
 * pyr_method_multigrid_execute. */
#include "methods/multigrid.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "backend/kernels.h"
#include "backend/plugin.h"
#include "core/error.h"
#include "methods/method.h"
#include "plan/planner.h"
#include "solvers/multigrid/mg.h"

static int is_multigrid(const pyr_problem_t *p) { return p->equation == PYR_EQ_POISSON && p->poisson.iteration == PYR_ITER_MULTIGRID; }

static pyr_status_t mg_check(const pyr_problem_t *p, pyr_options_t *o)
{
    const int mg = is_multigrid(p);
    if (o->method == PYR_METHOD_MULTIGRID && !mg)
        return pyr_fail(PYR_ERR_CONFIG, "run.method = multigrid solves the Poisson equation with scheme.iteration = multigrid; set "
                        "equation = poisson and iteration = multigrid, or use another method");
    if (!mg) return PYR_OK;
    /* iteration = multigrid implies the method: method = auto takes it */
    if (o->method == PYR_METHOD_AUTO) o->method = PYR_METHOD_MULTIGRID;
    if (o->method != PYR_METHOD_MULTIGRID)
        return pyr_fail(PYR_ERR_CONFIG, "scheme.iteration = multigrid runs its cycles with run.method = multigrid, not %s (which sweeps "
                        "Jacobi); set method = multigrid (or auto), or iteration = chebyshev to sweep",
                        pyr_method_name(o->method));
    if (p->whole[0] > 0 || p->whole[1] > 0 || p->whole[2] > 0 || (o->devices[0] && strcmp(o->devices, "0") != 0))
        return pyr_fail(PYR_ERR_UNSUPPORTED, "method = multigrid runs on one device, not over several devices or MPI ranks; leave "
                        "run.devices out (run.device = N chooses the GPU) and run one process");
    if (o->decomposition != PYR_DECOMP_AUTO || o->piece > 0 || o->height > 0)
        return pyr_fail(PYR_ERR_CONFIG, "run.decomposition, rows, block and height with method = multigrid: its levels stay whole on the "
                        "device (no pieces, no passes); leave them auto");
    if (o->kernel[0])
        return pyr_fail(PYR_ERR_CONFIG, "run.kernel = %s with method = multigrid: it runs its own smoothing and transfer kernels; leave "
                        "run.kernel = auto", o->kernel);
    if (o->plan_mode == PYR_PLAN_REFINE)
        return pyr_fail(PYR_ERR_CONFIG, "run.plan = refine with method = multigrid: it has no passes to refine; use plan = estimate");
    if (o->snapshot_every > 0)
        return pyr_fail(PYR_ERR_CONFIG, "output.every = %lld with method = multigrid: a cycle leaves no sweep's layer to write; leave "
                        "output.every out (the result is written)", (long long)o->snapshot_every);
    if (p->poisson.omega != 1)
        return pyr_fail(PYR_ERR_CONFIG, "scheme.omega = %g with iteration = multigrid: its smoother takes the weight 2d/(2d + 1) of a "
                        "d-dimensional grid itself; leave omega = 1", p->poisson.omega);
    /* Neumann faces (a flux or none, every face included) are the levels' own: nothing to refuse here */
    pyr_mg_hierarchy_t hy;
    return pyr_mg_hierarchy(p, &hy);
}

static pyr_status_t mg_device(pyr_backend_kind_t kind)
{
    if (pyr_mg_backend_built(kind)) return PYR_OK;
    return pyr_fail(PYR_ERR_NODEVICE, "method = multigrid on backend = cuda: %s", pyr_cuda_missing());
}

/* The CPU's automatic budget is a cache's, for streamed pieces: the levels live in the host's memory. */
static uint64_t mg_budget(const pyr_plan_t *plan, const pyr_method_ctx_t *ctx)
{
    return plan->options.memory == 0 && plan->ops->kind == PYR_BACKEND_CPU ? pyr_host_ram_bytes() : ctx->budget;
}

static pyr_status_t mg_choose(pyr_plan_t *plan, pyr_method_ctx_t *ctx, pyr_method_choice_t *c)
{
    pyr_mg_hierarchy_t hy;
    PYR_TRY(pyr_mg_hierarchy(&plan->problem, &hy));
    /* the levels that do not fit stream from host memory in slabs; a budget too small for that is refused naming the
     * smallest that works */
    pyr_mg_stream_t s;
    PYR_TRY(pyr_mg_stream_plan(&plan->problem, &hy, mg_budget(plan, ctx), &s));
    c->decomp = ctx->cands[0];
    c->height = 1;
    c->seconds = NAN;
    c->modelled = 0;
    const pyr_mg_level_t *L = &hy.level[hy.nlevels - 1];
    int w = snprintf(c->why, sizeof c->why, "%s-cycles over %d levels down to %lld x %lld x %lld nodes, %d + %d %s sweeps per level, %lld "
                     "coarsest sweeps", hy.cycle == PYR_CYCLE_F ? "F" : "V", hy.nlevels, (long long)L->n[0], (long long)L->n[1],
                     (long long)L->n[2], hy.pre, hy.post, hy.smoother == PYR_SMOOTH_JACOBI ? "weighted-Jacobi" : "Chebyshev",
                     (long long)hy.coarse_sweeps);
    if (s.streamed > 0 && w > 0 && (size_t)w < sizeof c->why) {
        char moved[32];
        pyr_format_bytes(s.moved, moved, sizeof moved);
        char levels[24] = "level 0";
        if (s.streamed > 1) snprintf(levels, sizeof levels, "levels 0-%d", s.streamed - 1);
        snprintf(c->why + w, sizeof c->why - (size_t)w, "; %s streamed from host memory in slabs of %lld planes along %c (+%d halo "
                 "each side), %s moved per cycle", levels, (long long)s.slab[0], "xyz"[s.axis], s.halo[0], moved);
    }
    return PYR_OK;
}

/* The kernel a multigrid plan names: the executor's passes never run one (the run is
 * pyr_method_multigrid_execute); a plan that reaches them anyway fails saying so instead of sweeping Jacobi. */
static pyr_status_t mg_kernel_check(const pyr_variant_t *v, int dims, pyr_precision_t precision)
{
    (void)v, (void)dims, (void)precision;
    return PYR_OK;
}

static void mg_kernel_default(int dims, pyr_precision_t precision, pyr_variant_t *v)
{
    (void)dims, (void)precision;
    memset(v, 0, sizeof *v);
    snprintf(v->name, sizeof v->name, "multigrid");
}

static int mg_kernel_candidates(int dims, pyr_precision_t precision, pyr_variant_t *v, int max)
{
    (void)dims, (void)precision, (void)v, (void)max;
    return 0;
}

static pyr_status_t mg_kernel_run(void *ctx, int slot, const pyr_kernel_call_t *call)
{
    (void)ctx, (void)slot, (void)call;
    return pyr_fail(PYR_ERR_INTERNAL, "a plan of method = multigrid reached the executor's passes: pyr_execute_fields must hand it to "
                    "pyr_method_multigrid_execute (its level loop), which this build does not");
}

static const pyr_kernel_t mg_kernel = {
    .equation = PYR_EQ_POISSON,
    .backend = PYR_BACKEND_AUTO,
    .help = "multigrid: its own smoothing, residual and transfer kernels (src/solvers/multigrid/)",
    .check = mg_kernel_check,
    .default_variant = mg_kernel_default,
    .candidates = mg_kernel_candidates,
    .run = mg_kernel_run,
};

/* The naive method's resident description (one piece, the whole grid), then the method, kernel and memory of the
 * hierarchy. */
static pyr_status_t mg_build(pyr_plan_t *plan, pyr_method_ctx_t *ctx, const pyr_method_choice_t *c)
{
    pyr_mg_hierarchy_t hy;
    PYR_TRY(pyr_mg_hierarchy(&plan->problem, &hy));
    PYR_TRY(pyr_plan_build(plan, PYR_METHOD_NAIVE, c->decomp, 1, UINT64_MAX));
    plan->budget = mg_budget(plan, ctx);
    plan->method = PYR_METHOD_MULTIGRID;
    plan->kernel = &mg_kernel;
    mg_kernel_default(plan->problem.dims, plan->problem.precision, &plan->variant);
    pyr_mg_stream_t s;
    PYR_TRY(pyr_mg_stream_plan(&plan->problem, &hy, plan->budget, &s));
    plan->device_bytes = s.device_bytes;
    if (s.streamed > 0) {
        /* the levels beyond the budget are not on the device: say which, in what slabs, and what crosses the bus */
        char moved[32], host[32];
        pyr_format_bytes(s.moved, moved, sizeof moved);
        pyr_format_bytes(s.host_bytes, host, sizeof host);
        pyr_plan_add_notice(plan, "multigrid out of core: %d of its %d levels streamed from host memory (%s beside the caller's u and f), "
                            "the finest in slabs of %lld of its %lld planes along %c with %d halo planes each side recomputed; %s moved "
                            "to and from the device per cycle; levels %d-%d%s in core", s.streamed, hy.nlevels, host, (long long)s.slab[0],
                            (long long)hy.level[0].n[s.axis], "xyz"[s.axis], s.halo[0], moved, s.streamed, hy.nlevels - 1,
                            s.f_resident ? " and the finest level's f" : "");
    }
    memset(&plan->predicted, 0, sizeof plan->predicted);
    return PYR_OK;
}

const pyr_method_entry_t pyr_method_multigrid = {
    .id = PYR_METHOD_MULTIGRID,
    .name = "multigrid",
    .automatic = 0, /* method = auto leaves it to the configuration: iteration = multigrid sets method = multigrid */
    .check = mg_check,
    .device = mg_device,
    .fits = NULL,
    .choose = mg_choose,
    .build = mg_build,
    .execute = pyr_method_multigrid_execute,
};

pyr_status_t pyr_method_multigrid_execute(pyr_plan_t *plan, pyr_field_t *const *fields, int nfields, const pyr_hooks_t *hooks,
                                          pyr_run_info_t *run)
{
    if (run) memset(run, 0, sizeof *run);
    if (!plan || !fields || !fields[0]) return pyr_fail(PYR_ERR_ARG, "pyr_execute_fields: plan and the field u are required");
    const pyr_problem_t *p = &plan->problem;
    if (plan->method != PYR_METHOD_MULTIGRID || !is_multigrid(p) || nfields != plan->scheme->nfields)
        return pyr_fail(PYR_ERR_ARG, "pyr_execute_fields: a multigrid plan of the Poisson scheme takes its %d fields (u, f)", plan->scheme->nfields);
    pyr_field_t *u = fields[0];
    for (int a = 0; a < 3; a++)
        if (u->n[a] != p->n[a] || u->precision != p->precision || !u->data)
            return pyr_fail(PYR_ERR_ARG, "field u does not match the plan's grid and precision");
    /* f: the caller's, or made from the problem (none for rhs.kind = zero) */
    pyr_field_t *made = NULL;
    const pyr_field_t *f = NULL;
    if (p->poisson.rhs != PYR_RHS_ZERO) {
        if (nfields > 1 && fields[1]) {
            f = fields[1];
            for (int a = 0; a < 3; a++)
                if (f->n[a] != p->n[a] || f->precision != p->precision || !f->data)
                    return pyr_fail(PYR_ERR_ARG, "field f does not match the plan's grid and precision");
            /* the caller's own f (every face Neumann: its compatibility), as the executor checks it for the sweeps */
            if (plan->scheme->check_inputs) {
                const pyr_field_t *given[PYR_MAX_FIELDS] = {NULL};
                given[1] = f;
                PYR_TRY(plan->scheme->check_inputs(p, given));
            }
        } else {
            PYR_TRY(pyr_field_create(p, &made));
            pyr_status_t st = plan->scheme->init_input(p, 1, made);
            if (st != PYR_OK) {
                pyr_field_destroy(&made);
                return st;
            }
            f = made;
        }
    }
    pyr_mg_result_t res;
    const pyr_status_t st = pyr_mg_solve_within(p, plan->ops->kind, plan->options.device, plan->options.threads, plan->budget, u, f, hooks, &res);
    pyr_field_destroy(&made);
    if (run && st == PYR_OK) {
        const uint64_t e = pyr_precision_size(p->precision);
        run->counts.uploaded = res.uploaded / e;
        run->counts.downloaded = res.downloaded / e;
        run->counts.computed = res.node_updates;
        run->steps = res.cycles;
        run->checked = 1;
        run->change = res.residual;
        run->converged = res.converged;
        run->parts = run->ranks = 1;
        run->mg_cycles = res.cycles;
        run->mg_sweeps = res.sweeps;
    }
    return st;
}
