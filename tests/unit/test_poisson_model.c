/* The paper's model of the Poisson pyramid
 * (docs/theory.md#the-pyramid-method-for-jacobi-sweeps) as the serial form of
 * the project's model (issue 19).  For slabs of R planes of an N^3 grid with
 * halo h, an interior piece moves and computes exactly
 *     up:   u over R planes and f over the R - 2 planes the first sweep updates, (N-2)^2 each
 *           (the seed counts 2 R N^2: whole planes of both; the boundary faces stay resident here)
 *     down: R - 2h planes of (N-2)^2
 *     computed: h (R - h - 1) (N - 2)^2  (the seed's figure)
 * and the serial form with per-value costs only, t_c and t_a, is the seed's
 *     T = sum over pieces of (values moved) t_c + (values computed) t_a
 * summed over the plan's pieces; a Laplace problem (f = 0) moves no f. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plan/model.h"
#include "tune/tune.h"
#include "plan/plan.h"
#include "poisson_util.h"

static void one(pyr_rhs_kind_t rhs, int64_t N, int64_t h, int64_t R)
{
    int64_t n[3] = {N, N, N};
    pyr_problem_t p;
    make_poisson(&p, 3, n, NULL, PYR_FLOAT, 4 * h, 0, 20, rhs, PYR_INIT_ZERO, 0);
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = PYR_BACKEND_CPU;
    o.method = PYR_METHOD_PYRAMID;
    o.decomposition = PYR_DECOMP_SLABS;
    o.height = h;
    o.piece = R;
    o.memory = 1ull << 40;
    pyr_model_constants_t k = pyr_model_default(PYR_BACKEND_CPU, 3, PYR_FLOAT);
    const double tc = 3e-9, ta = 1e-9;
    k.up = k.down = k.up_both = k.down_both = k.up_strided = k.down_strided = tc;
    k.row = k.call = k.launch = k.host = k.compute_row = 0;
    k.up_ragged = k.down_ragged = k.up_row_busy = k.down_row_busy = k.up_part_row = k.down_part_row = 0;
    for (int i = 0; i < PYR_MODEL_NLAYERS; i++) k.compute[i] = ta;
    pyr_plan_t *plan = NULL;
    CHECK_OK(pyr_plan_create_with_model(&p, &o, &k, PYR_MODEL_SERIAL, &plan));
    if (!plan) return;
    const double plane = (double)((N - 2) * (N - 2));
    const int with_f = rhs != PYR_RHS_ZERO;
    double sum = 0;
    int interior = 0;
    for (int64_t t = 0; t < pyr_plan_tasks(plan); t++) {
        pyr_task_t task;
        pyr_plan_task(plan, t, h, &task);
        const double Rt = (double)pyr_box_extent(&task.src, 2), rt = (double)pyr_box_extent(&task.result, 2);
        double up = (double)pyr_box_volume(&task.upload) + (with_f ? (double)pyr_box_volume(&task.input) : 0);
        double down = (double)pyr_box_volume(&task.result), comp = 0;
        for (int64_t l = 1; l <= h; l++) {
            pyr_box_t b = pyr_plan_layer_box(plan, &task, h, l);
            comp += (double)pyr_box_volume(&b);
        }
        if (task.src.lo[2] > 0 && task.src.hi[2] < N) {
            /* an interior slab: the closed forms */
            interior++;
            CHECK(Rt <= (double)R && rt == Rt - 2 * (double)h, "slab of %g planes (at most %lld), result %g", Rt, (long long)R, rt);
            CHECK(up == (Rt + (with_f ? Rt - 2 : 0)) * plane, "uploaded %g, closed form %g", up, (Rt + (with_f ? Rt - 2 : 0)) * plane);
            CHECK(down == (Rt - 2 * (double)h) * plane, "downloaded %g", down);
            CHECK(comp == (double)h * (Rt - (double)h - 1) * plane, "computed %g, the seed's h(R-h-1)(N-2)^2 = %g", comp,
                  (double)h * (Rt - (double)h - 1) * plane);
        }
        sum += (up + down) * tc + comp * ta;
    }
    CHECK(interior > 0, "no interior slab in the plan (N %lld, R %lld, h %lld)", (long long)N, (long long)R, (long long)h);
    pyr_model_prediction_t pr;
    CHECK_OK(pyr_model_predict_pass(plan, &k, PYR_MODEL_SERIAL, h, &pr));
    printf("Poisson 3D N=%lld slabs R=%lld h=%lld f=%s: serial model %.6g s per pass, seed's form over the plan's pieces %.6g s\n",
           (long long)N, (long long)R, (long long)h, with_f ? "yes" : "no", pr.seconds, sum);
    CHECK(fabs(pr.seconds - sum) <= 1e-9 * sum, "serial model %.9g s, the seed's form %.9g s", pr.seconds, sum);
    pyr_plan_destroy(&plan);
}

int main(void)
{
    one(PYR_RHS_SINE, 40, 5, 18);
    one(PYR_RHS_SINE, 61, 8, 33);
    one(PYR_RHS_ZERO, 40, 5, 18);
    return check_report();
}
