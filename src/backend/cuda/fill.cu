/* The CUDA runtime's fill (backend/device.h): a field's values over a box of
 * a resident piece made on the device from a recipe (core/recipe.h) instead
 * of uploaded.  Zeros are a memset; a tabled kind's per-axis factors, made
 * on the host with its sin and exp, are copied over and multiplied here in
 * the host's order, ((tx * ty) * tz) rounded to nearest (no fused
 * multiply-add can arise in a product); the random kind is the same
 * splitmix64 text as the host's.  So the device holds the bits the host
 * would have uploaded. */
#include <string.h>

#include "backend/cuda/cuda_internal.cuh"

using namespace pyrcu;

namespace {

/* Node (x, y, z) of a w x ny x nz box, at o + z * plane + y * pitch + x:
 * threads of a block along x, grid-striding over the box's rows. */
template <typename T, bool TABLES>
__global__ void k_fill(T *o, int64_t pitch, int64_t plane, int w, int ny, int64_t rows, int dims, const double *tx, const double *ty,
                       const double *tz, uint64_t seed, int64_t g0, int64_t gn0, int64_t gn1)
{
    for (int64_t row = blockIdx.y; row < rows; row += gridDim.y) {
        const int y = (int)(row % ny);
        const int64_t z = row / ny;
        T *out = o + z * plane + (int64_t)y * pitch;
        for (int x = blockIdx.x * blockDim.x + threadIdx.x; x < w; x += blockDim.x * gridDim.x) {
            double v;
            if (TABLES) {
                v = tx[x];
                if (dims >= 2) v = __dmul_rn(v, ty[y]);
                if (dims >= 3) v = __dmul_rn(v, tz[z]);
            } else {
                /* g0: the whole grid's index of the box's first node */
                v = pyr_recipe_random(seed, g0 + (z * gn1 + y) * gn0 + x);
            }
            if (sizeof(T) == 8) out[x] = (T)v;
            else out[x] = (T)__double2float_rn(v);
        }
    }
}

} // namespace

extern "C" pyr_status_t pyr_cuda_fill(void *ctx, int slot, const pyr_piece_t *piece, int f, const pyr_recipe_t *r, const double *const tab[3],
                                      const pyr_box_t *box)
{
    ctx_t *c = (ctx_t *)ctx;
    PYR_TRY(check_slot(c, slot));
    if (pyr_box_empty(box)) return PYR_OK;
    if (!pyr_box_contains(&piece->box, box)) return pyr_fail(PYR_ERR_INTERNAL, "CUDA backend: fill box outside its piece");
    const bool tables = pyr_recipe_tabled(r->kind);
    if (tables && (!tab[0] || (r->dims >= 2 && !tab[1]) || (r->dims >= 3 && !tab[2])))
        return pyr_fail(PYR_ERR_INTERNAL, "CUDA backend: a fill of a tabled recipe without its tables");
    if (r->kind != PYR_RECIPE_ZERO && r->kind != PYR_RECIPE_RANDOM && !tables)
        return pyr_fail(PYR_ERR_INTERNAL, "CUDA backend: a fill of recipe kind %d", (int)r->kind);
    PYR_CU(cudaSetDevice(c->device));
    cudaStream_t s = c->stream[slot];
    const int64_t w = pyr_box_extent(box, 0), ny = pyr_box_extent(box, 1), nz = pyr_box_extent(box, 2);
    const int64_t prow = pyr_box_extent(&piece->box, 1);
    const size_t elem = c->elem, dp = (size_t)piece->pitch * elem;
    char *d = (char *)piece->buf[f][0] + pyr_piece_index(piece, box->lo[0], box->lo[1], box->lo[2]) * (int64_t)elem;
    if (w >= ((int64_t)1 << 31) || ny >= ((int64_t)1 << 31))
        return pyr_fail(PYR_ERR_INTERNAL, "CUDA backend: a fill of %lld x %lld nodes per plane", (long long)w, (long long)ny);
    if (r->kind == PYR_RECIPE_ZERO) {
        /* rows of consecutive planes follow each other where the box spans the piece's rows */
        if (nz == 1 || ny == prow) PYR_CU(cudaMemset2DAsync(d, dp, 0, (size_t)w * elem, (size_t)(ny * nz), s));
        else PYR_CU(cudaMemset3DAsync(make_cudaPitchedPtr(d, dp, (size_t)w * elem, (size_t)prow), 0,
                                  make_cudaExtent((size_t)w * elem, (size_t)ny, (size_t)nz), s));
        return note_writer_of(c, slot, piece->buf[f][0]);
    }
    /* the factors of the box's nodes, one array on the device for the kernel's run */
    double *dev = NULL;
    const double *t[3] = {NULL, NULL, NULL};
    if (tables) {
        const int64_t ext[3] = {w, ny, nz};
        size_t count = 0;
        for (int a = 0; a < r->dims; a++) count += (size_t)ext[a];
        PYR_CU(cudaMalloc((void **)&dev, count * sizeof(double)));
        size_t at = 0;
        for (int a = 0; a < r->dims; a++) {
            /* from pageable memory: the call returns with the host's array read */
            const cudaError_t e = cudaMemcpyAsync(dev + at, tab[a], (size_t)ext[a] * sizeof(double), cudaMemcpyHostToDevice, s);
            if (e != cudaSuccess) {
                cudaFree(dev);
                return fail_cuda(e, "copying an initial field's factors to the GPU (cudaMemcpyAsync)", c->device);
            }
            t[a] = dev + at;
            at += (size_t)ext[a];
        }
    }
    const int64_t rows = ny * nz, plane = piece->pitch * prow;
    const int threads = 256;
    dim3 grid((unsigned)((w + threads - 1) / threads < 8 ? (w + threads - 1) / threads : 8), (unsigned)(rows < 65535 ? rows : 65535));
    const int64_t g0 = ((r->origin[2] + box->lo[2]) * r->whole[1] + r->origin[1] + box->lo[1]) * r->whole[0] + r->origin[0] + box->lo[0];
    if (elem == 8) {
        if (tables)
            k_fill<double, true><<<grid, threads, 0, s>>>((double *)d, piece->pitch, plane, (int)w, (int)ny, rows, r->dims, t[0], t[1], t[2],
                                                          r->seed, g0, r->whole[0], r->whole[1]);
        else
            k_fill<double, false><<<grid, threads, 0, s>>>((double *)d, piece->pitch, plane, (int)w, (int)ny, rows, r->dims, t[0], t[1], t[2],
                                                           r->seed, g0, r->whole[0], r->whole[1]);
    } else {
        if (tables)
            k_fill<float, true><<<grid, threads, 0, s>>>((float *)d, piece->pitch, plane, (int)w, (int)ny, rows, r->dims, t[0], t[1], t[2],
                                                         r->seed, g0, r->whole[0], r->whole[1]);
        else
            k_fill<float, false><<<grid, threads, 0, s>>>((float *)d, piece->pitch, plane, (int)w, (int)ny, rows, r->dims, t[0], t[1], t[2],
                                                          r->seed, g0, r->whole[0], r->whole[1]);
    }
    cudaError_t e = cudaGetLastError();
    /* the factors are freed once the kernel has read them: the fill is set-up, once per field and run */
    if (dev) {
        const cudaError_t w2 = cudaStreamSynchronize(s);
        if (e == cudaSuccess) e = w2;
        cudaFree(dev);
    }
    if (e != cudaSuccess) return fail_cuda(e, "making an initial field on the GPU (k_fill)", c->device);
    return note_writer_of(c, slot, piece->buf[f][0]);
}
