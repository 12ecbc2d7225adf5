/* The long-vector method (docs/theory.md#the-long-vector-method) on the CUDA backend: the
 * heat kernel's "longvector" variant, each step as whole-vector cuBLAS
 * operations on the contiguous range of a piece buffer that a box spans
 * (plan/longvector.h has the sequence and the model; the sequence itself is
 * methods/longvector/longvector_step.c, written once over the four operations
 * mapped to cuBLAS here).  The variant registers itself with the kernels as
 * the library loads (backend/kernels.h pyr_kernel_extra_t), and the CUDA heat
 * kernel hands it the calls of that variant; it keeps its cuBLAS handle and
 * work vectors as its own state in the runtime's context.
 *
 * Bit-identity with the stencil kernels (every method's result is the same,
 * DESIGN.md): each operation rounds exactly once, as the kernel's explicitly
 * rounded operation at that place of
 *     u' = u + ((rx*((xm + xp) - (u + u)) + ry*((ym + yp) - (u + u))))
 * geam with alpha = beta = 1 computes round(1*a + 1*b) = round(a + b) however
 * it is evaluated (1*a is exact, and an FMA of 1*a + b rounds once); axpy with
 * alpha = +-1 likewise gives round(y +- x) fused or not; scal gives
 * round(r * x).  a - b and a + (-b) are the same IEEE operation, and a + b =
 * b + a, so the order of the operands does not matter.  The nodes of the
 * range outside the box (the border nodes between its rows, and the row
 * padding) receive garbage and are then copied back from the source layer,
 * where they hold what the stencil kernels leave there: nodes outside a box
 * keep their values, and the boundary is the same in both layers.
 *
 * cuBLAS is called with the host pointer mode, pedantic math (no reduced
 * precision anywhere) and 64-bit sizes, on the slot's stream; it is loaded
 * when the method first runs (cuda_libs.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/cuda_internal.cuh"
#include "methods/longvector/cuda/longvector_api.h"
#include "methods/longvector/longvector_step.h"
#include "plan/longvector.h"

namespace {

using pyrcu::ctx_t;
using pyrcu::cublas_api_t;

/* The method's state in a context (cuda_internal.cuh state_of): a cuBLAS
 * handle of the device's pool, and the two work vectors, kept and grown
 * across calls. */
struct lv_state_t {
    const cublas_api_t *api;
    cublasHandle_t blas;
    void *scratch;
    size_t bytes;
    pyrcu::issuer_t by;
};
const char lv_key = 0;

const char *const lv_user = "the long-vector method (method = longvector)";
const char *const lv_instead = "or use method = naive, which computes the same result without it";

void lv_free(ctx_t *c, void *data)
{
    lv_state_t *s = (lv_state_t *)data;
    if (s->blas) {
        /* pooled handles issue on the default stream until their next user sets its own */
        s->api->SetStream(s->blas, 0);
        pyrcu::blas_give(c, s->blas);
    }
    pyr_device_cuda.dev_free(c, s->scratch);
    free(s);
}

/* The context's state, its handle made on first use (cuBLAS loaded then), issuing on `stream`. */
pyr_status_t lv_on(ctx_t *c, cudaStream_t stream, lv_state_t **out)
{
    lv_state_t *s = (lv_state_t *)pyrcu::state_of(c, &lv_key);
    if (!s) {
        s = (lv_state_t *)calloc(1, sizeof *s);
        if (!s) return pyr_fail(PYR_ERR_NOMEM, "out of host memory");
        s->by = pyrcu::issuer_t{c->device, "the long-vector method", "free the GPU or use a smaller grid",
                                "method = naive computes the same result without it"};
        pyr_status_t st = pyrcu::state_keep(c, &lv_key, s, lv_free);
        if (st != PYR_OK) {
            free(s);
            return st;
        }
    }
    if (!s->blas) {
        PYR_TRY(pyrcu::blas_take(c, &s->api, &s->blas, lv_user, lv_instead));
        PYR_CUBLAS_BY(s->api, s->by, s->api->SetPointerMode(s->blas, CUBLAS_POINTER_MODE_HOST));
        PYR_CUBLAS_BY(s->api, s->by, s->api->SetMathMode(s->blas, CUBLAS_PEDANTIC_MATH));
    }
    PYR_CUBLAS_BY(s->api, s->by, s->api->SetStream(s->blas, stream));
    *out = s;
    return PYR_OK;
}

/* At least `bytes` of work memory (kept, and grown, across calls). */
pyr_status_t scratch(ctx_t *c, lv_state_t *s, size_t bytes, void **out)
{
    if (s->bytes < bytes) {
        if (s->scratch) {
            pyr_device_cuda.dev_free(c, s->scratch); /* cudaFree: waits for the work that used it */
            s->scratch = NULL;
            s->bytes = 0;
        }
        pyr_status_t st = pyr_device_cuda.dev_alloc(c, bytes, &s->scratch);
        if (st == PYR_ERR_DEVICE_NOMEM)
            return pyr_fail(PYR_ERR_DEVICE_NOMEM,
                            "GPU %d (%s): out of device memory for the long-vector method's two work vectors (%.1f MiB); use a "
                            "smaller grid, or method = naive (no work vectors)",
                            c->device, c->dev->name, (double)bytes / 1048576.0);
        PYR_TRY(st);
        s->bytes = bytes;
    }
    *out = s->scratch;
    return PYR_OK;
}

/* The three kinds of operation, per precision, with 64-bit sizes.  geam on
 * an m x 1 matrix is the vector add C = alpha A + beta B. */
cublasStatus_t geam(const lv_state_t *s, int64_t m, const float *alpha, const float *a, const float *beta, const float *b, float *out)
{
    return s->api->Sgeam_64(s->blas, CUBLAS_OP_N, CUBLAS_OP_N, m, 1, alpha, a, m, beta, b, m, out, m);
}
cublasStatus_t geam(const lv_state_t *s, int64_t m, const double *alpha, const double *a, const double *beta, const double *b,
                    double *out)
{
    return s->api->Dgeam_64(s->blas, CUBLAS_OP_N, CUBLAS_OP_N, m, 1, alpha, a, m, beta, b, m, out, m);
}
cublasStatus_t axpy(const lv_state_t *s, int64_t m, const float *alpha, const float *x, float *y)
{
    return s->api->Saxpy_64(s->blas, m, alpha, x, 1, y, 1);
}
cublasStatus_t axpy(const lv_state_t *s, int64_t m, const double *alpha, const double *x, double *y)
{
    return s->api->Daxpy_64(s->blas, m, alpha, x, 1, y, 1);
}
cublasStatus_t scal(const lv_state_t *s, int64_t m, const float *alpha, float *x) { return s->api->Sscal_64(s->blas, m, alpha, x, 1); }
cublasStatus_t scal(const lv_state_t *s, int64_t m, const double *alpha, double *x) { return s->api->Dscal_64(s->blas, m, alpha, x, 1); }

/* The operations of longvector_step.h on cuBLAS, in precision T. */
struct lv_user_t {
    ctx_t *c;
    lv_state_t *s;
    cudaStream_t stream;
};

template <typename T> pyr_status_t op_add(void *user, int64_t m, const void *a, const void *b, void *out)
{
    const lv_state_t *s = ((lv_user_t *)user)->s;
    const T one = T(1);
    PYR_CUBLAS_BY(s->api, s->by, geam(s, m, &one, (const T *)a, &one, (const T *)b, (T *)out));
    return PYR_OK;
}

template <typename T> pyr_status_t op_axpy(void *user, int64_t m, double alpha, const void *x, void *y)
{
    const lv_state_t *s = ((lv_user_t *)user)->s;
    const T a = (T)alpha;
    PYR_CUBLAS_BY(s->api, s->by, axpy(s, m, &a, (const T *)x, (T *)y));
    return PYR_OK;
}

template <typename T> pyr_status_t op_scal(void *user, int64_t m, double alpha, void *x)
{
    const lv_state_t *s = ((lv_user_t *)user)->s;
    const T a = (T)alpha; /* as the stencil kernels round the coefficient (ops_heat.cuh) */
    PYR_CUBLAS_BY(s->api, s->by, scal(s, m, &a, (T *)x));
    return PYR_OK;
}

template <typename T> pyr_status_t op_copy2d(void *user, void *dst, const void *src, int64_t pitch, int64_t width, int64_t rows)
{
    lv_user_t *u = (lv_user_t *)user;
    const size_t e = sizeof(T);
    PYR_CU_BY(u->s->by, cudaMemcpy2DAsync(dst, (size_t)pitch * e, src, (size_t)pitch * e, (size_t)width * e, (size_t)rows,
                                          cudaMemcpyDeviceToDevice, u->stream));
    return PYR_OK;
}

template <typename T> pyr_lv_ops_t lv_ops(lv_user_t *u)
{
    pyr_lv_ops_t o;
    o.user = u;
    o.add = op_add<T>;
    o.axpy = op_axpy<T>;
    o.scal = op_scal<T>;
    o.copy2d = op_copy2d<T>;
    return o;
}

/* The variant "longvector" (no parameters, 2D only); the message says what works. */
pyr_status_t lv_check(const pyr_variant_t *v, int dims, pyr_precision_t precision)
{
    (void)precision;
    if (v->p[0] || v->p[1] || v->p[2]) return pyr_fail(PYR_ERR_CONFIG, "the CUDA variant longvector takes no parameters");
    if (dims != 2)
        return pyr_fail(PYR_ERR_UNSUPPORTED,
                        "the long-vector method (longvector) is the paper's algorithm for 2D grids; this grid is %dD: use method = "
                        "naive or pyramid",
                        dims);
    return PYR_OK;
}

/* Work memory of the variant: two vectors of a piece buffer's size. */
uint64_t lv_scratch_bytes(const pyr_variant_t *v, uint64_t layer_bytes)
{
    return !strcmp(v->name, "longvector") ? 2 * layer_bytes : 0;
}

/* The heat sub-steps of the call as cuBLAS operations (plan/longvector.h);
 * the first call takes a cuBLAS handle and makes the work vectors. */
pyr_status_t lv_run(void *ctx, int slot, const pyr_kernel_call_t *call)
{
    ctx_t *c = (ctx_t *)ctx;
    PYR_TRY(pyrcu::check_slot(c, slot));
    const pyr_piece_t *piece = call->piece;
    if (call->coef->dims != 2) return pyr_fail(PYR_ERR_INTERNAL, "CUDA backend: longvector called on a %dD piece", call->coef->dims);
    if (call->nboxes <= 0) return PYR_OK;
    const int64_t rows_all = pyr_box_extent(&piece->box, 1);
    for (int l = 0; l < call->nboxes; l++) {
        const pyr_box_t *b = &call->boxes[l];
        if (pyr_box_empty(b)) continue;
        for (int a = 0; a < 2; a++)
            if (b->lo[a] < piece->box.lo[a] + 1 || b->hi[a] > piece->box.hi[a] - 1)
                return pyr_fail(PYR_ERR_INTERNAL, "CUDA backend: layer %d box outside its piece", l);
    }
    double t0 = pyrcu::serial(c) ? pyrcu::now_s() : 0;
    PYR_CU(cudaSetDevice(c->device));
    cudaStream_t s = c->stream[slot];
    lv_state_t *state = NULL;
    PYR_TRY(lv_on(c, s, &state));
    const size_t layer = (size_t)piece->pitch * (size_t)rows_all * c->elem;
    void *work = NULL;
    PYR_TRY(scratch(c, state, 2 * layer, &work));
    const int span = pyrcu::span_begin(c, PYR_SPAN_COMPUTE, slot);
    lv_user_t user = {c, state, s};
    const pyr_lv_ops_t ops = c->elem == 8 ? lv_ops<double>(&user) : lv_ops<float>(&user);
    char *work_t = (char *)work, *work_x = work_t + layer;
    int cur = piece->cur;
    for (int l = 0; l < call->nboxes; l++) {
        const pyr_box_t *b = &call->boxes[l];
        if (!pyr_box_empty(b)) {
            PYR_TRY(pyr_lv_step(&ops, c->elem, piece->buf[0][cur], piece->buf[0][cur ^ 1], work_t, work_x,
                                pyr_piece_index(piece, b->lo[0], b->lo[1], b->lo[2]), piece->pitch, pyr_box_extent(b, 1),
                                pyr_box_extent(b, 0), call->coef->c[0], call->coef->c[1]));
            pyrcu::count(c->dev->stats.launches, PYR_LV_CALLS);
        }
        cur ^= 1;
    }
    pyrcu::span_end(c, span, slot);
    return pyrcu::serial_end(c, slot, t0, &c->dev->stats.compute_ns);
}

const pyr_kernel_extra_t lv_variant = {
    PYR_EQ_HEAT, PYR_BACKEND_CUDA, "longvector", lv_check, lv_run, lv_scratch_bytes,
};

/* Registered as the library loads: the object is linked wherever plans are made, since plan creation asks
 * the method's checks and model (tune/longvector.c), which call this file's entry points below. */
[[maybe_unused]] const bool lv_registered = pyr_kernel_extra_register(&lv_variant) != 0;

} // namespace

extern "C" pyr_status_t pyr_cuda_lv_resident_threads(int device, int64_t *threads)
{
    int sms = 0, per_sm = 0;
    cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device);
    if (e != cudaSuccess) return pyrcu::fail_cuda(e, "cudaDeviceGetAttribute", device);
    *threads = (int64_t)sms * (int64_t)per_sm;
    return PYR_OK;
}

namespace {

template <typename T> pyr_status_t time_ops(ctx_t *c, int64_t n, int batch, int repeats, double out[3])
{
    PYR_TRY(pyrcu::check_slot(c, 0));
    cudaStream_t s = c->stream[0];
    lv_state_t *state = NULL;
    PYR_TRY(lv_on(c, s, &state));
    void *work = NULL;
    PYR_TRY(scratch(c, state, 4 * (size_t)n * sizeof(T), &work));
    /* the operands rotate over four vectors, as a step's calls touch V, W, T and X: the same working set in the caches */
    T *v[4] = {(T *)work, (T *)work + n, (T *)work + 2 * n, (T *)work + 3 * n};
    PYR_CU(cudaMemsetAsync(work, 0, 4 * (size_t)n * sizeof(T), s));
    const T one = T(1), minus = T(-1), r = T(0.125);
    cudaEvent_t e0 = NULL, e1 = NULL;
    PYR_CU(cudaEventCreate(&e0));
    cudaError_t ce = cudaEventCreate(&e1);
    if (ce != cudaSuccess) {
        cudaEventDestroy(e0);
        return pyrcu::fail_cuda(ce, "cudaEventCreate", c->device);
    }
    pyr_status_t st = PYR_OK;
    for (int op = 0; op < 3 && st == PYR_OK; op++) {
        double best = 1e30;
        for (int rep = -1; rep < repeats && st == PYR_OK; rep++) { /* rep -1: warm-up */
            cublasStatus_t bs = CUBLAS_STATUS_SUCCESS;
            if (cudaEventRecord(e0, s) != cudaSuccess) bs = CUBLAS_STATUS_EXECUTION_FAILED;
            for (int i = 0; i < batch && bs == CUBLAS_STATUS_SUCCESS; i++) {
                T *a = v[i & 3], *b = v[(i + 1) & 3], *o = v[(i + 2) & 3];
                if (op == 0) bs = geam(state, n, &one, a, &one, b, o);
                else if (op == 1) bs = axpy(state, n, &minus, a, b);
                else bs = scal(state, n, &r, a);
            }
            if (bs != CUBLAS_STATUS_SUCCESS) {
                st = pyrcu::fail_cublas(state->api, bs, op == 0 ? "geam" : op == 1 ? "axpy" : "scal", state->by);
                break;
            }
            float ms = 0;
            cudaError_t e = cudaEventRecord(e1, s);
            if (e == cudaSuccess) e = cudaEventSynchronize(e1);
            if (e == cudaSuccess) e = cudaEventElapsedTime(&ms, e0, e1);
            if (e != cudaSuccess) {
                st = pyrcu::fail_cuda(e, "timing the long-vector operations", c->device);
                break;
            }
            if (rep >= 0 && 1e-3 * ms / batch < best) best = 1e-3 * ms / batch;
        }
        out[op] = best;
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return st;
}

} // namespace

extern "C" pyr_status_t pyr_cuda_lv_time_ops(void *ctx, int64_t n, int batch, int repeats, double out[3])
{
    ctx_t *c = (ctx_t *)ctx;
    if (n < 1 || batch < 1 || repeats < 1) return pyr_fail(PYR_ERR_ARG, "pyr_cuda_lv_time_ops: n, batch and repeats must be positive");
    PYR_CU(cudaSetDevice(c->device));
    return c->elem == 8 ? time_ops<double>(c, n, batch, repeats, out) : time_ops<float>(c, n, batch, repeats, out);
}
