/* The wave variant of the CUDA Maxwell kernel: K steps of the 2D (TM or TE)
 * Yee scheme per launch, the temporal blocking of the stencil kernels
 * (stencil_fused.cuh) carried over to the leapfrog.  Included by
 * kernels_maxwell.cu (it uses that file's helpers: update_box, free_run's
 * profiles, copies, tile_step).
 *
 * A block owns a tile of W columns (x) and a segment of S rows (y) and
 * streams up its rows, a thread per column: B = W + 2K threads cover the
 * tile and K columns each side of it, and it reads the rows from K below the
 * segment to K above it, since K steps of the scheme reach K nodes each way
 * (an H half-step reads E one node up in x and y, an E half-step H one node
 * down).  The 2K half-steps are levels of a pipeline: at iteration r the
 * thread loads E at row r and H at row r + 1 (the old values), and level j
 * (j = 2k - 1: H of step k, j = 2k: E of step k) computes row r - j.  Each
 * level needs, from the level before it, rows it computed this iteration or
 * earlier at the thread's own column (kept in registers: every level keeps
 * its last three rows, the components and their CPML auxiliaries), and one
 * neighbour's value in x computed at the previous iteration (E of x + 1 for
 * H, H of x - 1 for E).  Those go through shared memory: every level
 * publishes its row's neighbour-read component, in two buffers used in turn,
 * so one barrier per iteration orders the writes of iteration r before the
 * reads of r + 1 and the reads of r before the writes of r + 2.  The values
 * of the outer K columns and of the rows outside the segment go wrong from
 * the edge inward, one node per half-step on the side it reads from, and
 * after K steps only the owned tile is right: only it is written.
 *
 * The steps cannot update in place (a neighbouring block reads, as its
 * halo, the old values of nodes this one writes), so a launch reads one set
 * of buffers and writes the other (the piece's and copies the variant
 * keeps, swapping roles each launch).  The CPML auxiliaries psi are node-local
 * (a node's psi depends only on its own earlier value and the derivative at
 * the node), but a halo node's psi is read by the block that computes it
 * again, from the old set, while the owner writes the new value: updated in
 * place they would race (the reader could see the value K steps ahead).  So
 * psi ping-pongs with the fields: every launch reads psi from the set it
 * reads the fields from, carries each node's value in registers from level to
 * level as it does the fields (the level j + 2 of a row uses the value level
 * j left), and only the owner of a node writes it, to the other set, once per
 * launch; no node of a buffer is both read and written by one launch.  Only
 * the nodes in a layer (where the profile's flag is set) are read or
 * written, in both sets; the others keep their values in the piece's buffers
 * and are read by no one.
 *
 * Soft sources on E are added, in the call's order, right after the E
 * half-step of their step at their node, by every thread that computes the
 * node (its owner and the halos that hold a copy of it), so the neighbours'
 * later steps see them as the tile path's do.  Probes of E and H are written
 * by the owner of their node when the level of their step reaches it.
 *
 * What it declines (run as tile): 3D, periodic axes, dispersive terms,
 * sources on H (plane waves among them), sources with terms, more than
 * kWaveSrc sources or kWaveProbes probes, probes of other fields than the
 * grid's components, pieces of the grid and calls whose boxes change from
 * step to step. */
#ifndef PYR_BACKEND_CUDA_MAXWELL_WAVE_CUH
#define PYR_BACKEND_CUDA_MAXWELL_WAVE_CUH

namespace {

constexpr int kWaveMaxK = 8, kWaveMaxThreads = 256, kWaveThreadsDefault = 256, kWaveKDefault = 4, kWaveRowsDefault = 512;
constexpr int kWaveSrc = 8, kWaveProbes = 16;

template <typename T> struct Wave {
    /* the mode's three components: TM Ez, Hx, Hy; TE Ex, Ey, Hz (E first) */
    const T *Fin[3];
    T *Fout[3];
    /* psi: [0] E's along x, [1] E's along y, [2] H's along y, [3] H's along x; NULL where none */
    const T *Pin[4];
    T *Pout[4];
    const T *CA, *CB, *DH; /* per-node coefficients; NULL: the constants */
    T ca0, cb0, dh0;
    T rh[2];
    const double *table; /* the CPML profiles (device) */
    int64_t nmax;
    int64_t pitch;
    int n[2];
    int rlo[3][2], rhi[3][2]; /* per component: the nodes it updates */
    int width, rows;          /* owned columns and rows per block */
    int nsteps;               /* steps of this launch (<= K): later levels pass the values through */
    int nsrc;
    int src_c[kWaveSrc], src_x[kWaveSrc], src_y[kWaveSrc]; /* component (0..2 as above), node */
    T amp[kWaveMaxK][kWaveSrc];
    int nprobe;
    int pr_c[kWaveProbes], pr_x[kWaveProbes], pr_y[kWaveProbes];
    double *pout; /* the call's series at this launch's first step */
    int64_t pstride; /* the call's probes per step */
};

template <typename T> __device__ __forceinline__ void push3(T (&a)[3], T v)
{
    a[2] = a[1];
    a[1] = a[0];
    a[0] = v;
}

/* The layer's three profile values at pos along axis, half 0 (E) or 1 (H); false: no layer there. */
template <typename T>
__device__ __forceinline__ bool wave_profile(const double *table, int64_t nmax, int axis, int half, int pos, T &kv, T &b, T &a)
{
    const double *base = table + (int64_t)((axis * 2 + half) * 4) * nmax;
    if (base[3 * nmax + pos] == 0) return false;
    kv = (T)base[pos];
    b = (T)base[nmax + pos];
    a = (T)base[2 * nmax + pos];
    return true;
}

/* through_layer's expressions, psi carried in p */
template <typename T> __device__ __forceinline__ T wave_layer(T d, T &p, T kv, T b, T a)
{
    const T psi = add(mul(b, p), mul(a, d));
    p = psi;
    return add(mul(d, kv), psi);
}

template <typename T, int K, bool TE, bool Cpml>
__global__ void __launch_bounds__(kWaveMaxThreads) yee_wave(Wave<T> s)
{
    extern __shared__ unsigned char wave_smem[];
    T *shm = (T *)wave_smem; /* [2][2K][B + 2] */
    const int B = blockDim.x, t = threadIdx.x, ld_row = B + 2;
    const int x = blockIdx.x * s.width - K + t;
    const int Y0 = blockIdx.y * s.rows, Y1 = min(Y0 + s.rows, s.n[1]);
    const bool inx = x >= 0 && x < s.n[0];
    const bool owner = inx && t >= K && t < K + s.width;
    constexpr int NE = TE ? 2 : 1, NH = TE ? 1 : 2;
    /* the components' update ranges along x at this column (E comps first, then H) */
    bool inrx[3];
#pragma unroll
    for (int c = 0; c < 3; c++) inrx[c] = x >= s.rlo[c][0] && x < s.rhi[c][0];
    /* the layers along x at this column: E's (psi 0) and H's (psi 3) */
    T kx[2] = {0, 0}, bx[2] = {0, 0}, ax[2] = {0, 0};
    bool fx[2] = {false, false};
    if (Cpml && inx) {
        if (s.Pin[0]) fx[0] = wave_profile<T>(s.table, s.nmax, 0, 0, x, kx[0], bx[0], ax[0]);
        if (s.Pin[3]) fx[1] = wave_profile<T>(s.table, s.nmax, 0, 1, x, kx[1], bx[1], ax[1]);
    }
    for (int i = t; i < 2 * 2 * K * ld_row; i += B) shm[i] = (T)0;
    __syncthreads();

    /* level k's last three rows ([0] the newest): E[k] after step k's E, H[k] after its H; k = 0: loaded */
    T E[K + 1][NE][3], H[K + 1][NH][3], PE[K + 1][2][3], PH[K + 1][2][3];
#pragma unroll
    for (int k = 0; k <= K; k++) {
#pragma unroll
        for (int q = 0; q < 3; q++) {
#pragma unroll
            for (int c = 0; c < NE; c++) E[k][c][q] = 0;
#pragma unroll
            for (int c = 0; c < NH; c++) H[k][c][q] = 0;
#pragma unroll
            for (int c = 0; c < 2; c++) PE[k][c][q] = PH[k][c][q] = 0;
        }
    }
    const int lo_load = Y0 - K - 1, hi_load = Y1 + K + 1; /* rows read (within the grid) */
    const int r0 = Y0 - K - 1, r1 = Y1 - 1 + 2 * K;
    /* the old values of E (and E's psi) at row r and of H (and H's psi) at row r + 1 */
    T nE[NE], nH[NH], nP[4] = {0, 0, 0, 0};
    auto load = [&](int r) {
        const bool ok = inx && r >= 0 && r < s.n[1] && r >= lo_load && r < hi_load;
        const int64_t i = (int64_t)r * s.pitch + x;
#pragma unroll
        for (int c = 0; c < NE; c++) nE[c] = ok ? ld(s.Fin[c] + i) : (T)0;
        const int r2 = r + 1;
        const bool ok2 = inx && r2 >= 0 && r2 < s.n[1] && r2 >= lo_load && r2 < hi_load;
        const int64_t i2 = (int64_t)r2 * s.pitch + x;
#pragma unroll
        for (int c = 0; c < NH; c++) nH[c] = ok2 ? ld(s.Fin[NE + c] + i2) : (T)0;
        if (Cpml) {
            nP[0] = ok && fx[0] ? ld(s.Pin[0] + i) : (T)0;
            nP[1] = ok && s.Pin[1] && s.table[(int64_t)((1 * 2 + 0) * 4 + 3) * s.nmax + r] != 0 ? ld(s.Pin[1] + i) : (T)0;
            nP[2] = ok2 && s.Pin[2] && s.table[(int64_t)((1 * 2 + 1) * 4 + 3) * s.nmax + r2] != 0 ? ld(s.Pin[2] + i2) : (T)0;
            nP[3] = ok2 && fx[1] ? ld(s.Pin[3] + i2) : (T)0;
        }
    };
    load(r0);
    for (int r = r0; r <= r1; r++) {
        const int it = r - r0;
        T *wr = shm + (size_t)(it & 1) * 2 * K * ld_row, *rd = shm + (size_t)((it & 1) ^ 1) * 2 * K * ld_row;
        /* level 0: E (and E's psi) at row r, H (and H's psi) at row r + 1, loaded the iteration before */
        {
#pragma unroll
            for (int c = 0; c < NE; c++) push3(E[0][c], nE[c]);
#pragma unroll
            for (int c = 0; c < NH; c++) push3(H[0][c], nH[c]);
            if (Cpml) {
                push3(PE[0][0], nP[0]);
                push3(PE[0][1], nP[1]);
                push3(PH[0][0], nP[2]);
                push3(PH[0][1], nP[3]);
            }
            /* the E component H's x-differences read at x + 1 */
            wr[t + 1] = TE ? E[0][1][0] : E[0][0][0];
            /* the next iteration's rows, in flight while this one computes */
            load(r + 1);
        }
#pragma unroll
        for (int k = 1; k <= K; k++) {
            const bool live = k <= s.nsteps;
            /* H of step k at row y (level 2k - 1) */
            {
                const int y = r - (2 * k - 1);
                const bool oky = inx && y >= 0 && y < s.n[1];
                const int64_t i = (int64_t)y * s.pitch + x;
                /* the E component read at x + 1, row y (published by level 2k - 2 at the previous iteration) */
                const T ex1 = rd[(2 * k - 2) * ld_row + t + 2];
                T hn[NH], pn[2];
#pragma unroll
                for (int c = 0; c < NH; c++) hn[c] = H[k - 1][c][2];
                pn[0] = PH[k - 1][0][2];
                pn[1] = PH[k - 1][1][2];
                if (live && oky) {
                    T ky = 0, by = 0, ay = 0;
                    const bool fy = Cpml && s.Pin[2] && wave_profile<T>(s.table, s.nmax, 1, 1, y, ky, by, ay);
                    const T dh = s.DH ? ld(s.DH + i) : s.dh0;
                    if (TE) {
                        /* Hz from Ey (x) and Ex (y) */
                        const int c = 2;
                        if (inrx[c] && y >= s.rlo[c][1] && y < s.rhi[c][1]) {
                            T c1 = mul(sub(ex1, E[k - 1][1][1]), s.rh[0]);
                            if (Cpml && fx[1]) c1 = wave_layer(c1, pn[1], kx[1], bx[1], ax[1]);
                            T c2 = mul(sub(E[k - 1][0][0], E[k - 1][0][1]), s.rh[1]);
                            if (fy) c2 = wave_layer(c2, pn[0], ky, by, ay);
                            hn[0] = sub(hn[0], mul(dh, sub(c1, c2)));
                        }
                    } else {
                        /* Hx from Ez (y), Hy from Ez (x) */
                        if (inrx[1] && y >= s.rlo[1][1] && y < s.rhi[1][1]) {
                            T d = mul(sub(E[k - 1][0][0], E[k - 1][0][1]), s.rh[1]);
                            if (fy) d = wave_layer(d, pn[0], ky, by, ay);
                            hn[0] = sub(hn[0], mul(dh, d));
                        }
                        if (inrx[2] && y >= s.rlo[2][1] && y < s.rhi[2][1]) {
                            T d = mul(sub(ex1, E[k - 1][0][1]), s.rh[0]);
                            if (Cpml && fx[1]) d = wave_layer(d, pn[1], kx[1], bx[1], ax[1]);
                            hn[1] = add(hn[1], mul(dh, d));
                        }
                    }
                }
#pragma unroll
                for (int c = 0; c < NH; c++) push3(H[k][c], hn[c]);
                push3(PH[k][0], pn[0]);
                push3(PH[k][1], pn[1]);
                /* the H component E's x-differences read at x - 1: Hy (TM), Hz (TE) */
                wr[(2 * k - 1) * ld_row + t + 1] = hn[NH - 1];
                if (oky && y >= Y0 && y < Y1 && owner) {
                    if (k == K) {
#pragma unroll
                        for (int c = 0; c < NH; c++) s.Fout[NE + c][i] = hn[c];
                        if (Cpml) {
                            if (s.Pout[2] && s.table[(int64_t)((1 * 2 + 1) * 4 + 3) * s.nmax + y] != 0) s.Pout[2][i] = pn[0];
                            if (fx[1]) s.Pout[3][i] = pn[1];
                        }
                    }
                    if (live)
                        for (int q = 0; q < s.nprobe; q++)
                            if (s.pr_c[q] >= NE && s.pr_x[q] == x && s.pr_y[q] == y)
                                s.pout[(int64_t)(k - 1) * s.pstride + q] = (double)(NH > 1 && s.pr_c[q] == NE + 1 ? hn[NH - 1] : hn[0]);
                }
            }
            /* E of step k at row y (level 2k) */
            {
                const int y = r - 2 * k;
                const bool oky = inx && y >= 0 && y < s.n[1];
                const int64_t i = (int64_t)y * s.pitch + x;
                /* the H component read at x - 1, row y (published by level 2k - 1 at the previous iteration) */
                const T hx1 = rd[(2 * k - 1) * ld_row + t];
                T en[NE], pn[2];
#pragma unroll
                for (int c = 0; c < NE; c++) en[c] = E[k - 1][c][2];
                pn[0] = PE[k - 1][0][2];
                pn[1] = PE[k - 1][1][2];
                if (live && oky) {
                    T ky = 0, by = 0, ay = 0;
                    const bool fy = Cpml && s.Pin[1] && wave_profile<T>(s.table, s.nmax, 1, 0, y, ky, by, ay);
                    const T ca = s.CA ? ld(s.CA + i) : s.ca0, cb = s.CB ? ld(s.CB + i) : s.cb0;
                    if (TE) {
                        /* Ex from Hz (y), Ey from Hz (x) */
                        if (inrx[0] && y >= s.rlo[0][1] && y < s.rhi[0][1]) {
                            T c1 = mul(sub(H[k][0][1], H[k][0][2]), s.rh[1]);
                            if (fy) c1 = wave_layer(c1, pn[1], ky, by, ay);
                            en[0] = add(mul(ca, en[0]), mul(cb, c1));
                        }
                        if (inrx[1] && y >= s.rlo[1][1] && y < s.rhi[1][1]) {
                            T c2 = mul(sub(H[k][0][1], hx1), s.rh[0]);
                            if (Cpml && fx[0]) c2 = wave_layer(c2, pn[0], kx[0], bx[0], ax[0]);
                            en[1] = sub(mul(ca, en[1]), mul(cb, c2));
                        }
                    } else {
                        /* Ez from Hy (x) and Hx (y) */
                        if (inrx[0] && y >= s.rlo[0][1] && y < s.rhi[0][1]) {
                            T c1 = mul(sub(H[k][1][1], hx1), s.rh[0]);
                            if (Cpml && fx[0]) c1 = wave_layer(c1, pn[0], kx[0], bx[0], ax[0]);
                            T c2 = mul(sub(H[k][0][1], H[k][0][2]), s.rh[1]);
                            if (fy) c2 = wave_layer(c2, pn[1], ky, by, ay);
                            en[0] = add(mul(ca, en[0]), mul(cb, sub(c1, c2)));
                        }
                    }
                    /* the step's sources, in the call's order, after its E */
                    for (int q = 0; q < s.nsrc; q++)
                        if (s.src_x[q] == x && s.src_y[q] == y) {
#pragma unroll
                            for (int c = 0; c < NE; c++)
                                if (s.src_c[q] == c) en[c] = add(en[c], s.amp[k - 1][q]);
                        }
                }
#pragma unroll
                for (int c = 0; c < NE; c++) push3(E[k][c], en[c]);
                push3(PE[k][0], pn[0]);
                push3(PE[k][1], pn[1]);
                if (k < K) wr[(2 * k) * ld_row + t + 1] = en[NE - 1];
                if (oky && y >= Y0 && y < Y1 && owner) {
                    if (k == K) {
#pragma unroll
                        for (int c = 0; c < NE; c++) s.Fout[c][i] = en[c];
                        if (Cpml) {
                            if (fx[0]) s.Pout[0][i] = pn[0];
                            if (s.Pout[1] && s.table[(int64_t)((1 * 2 + 0) * 4 + 3) * s.nmax + y] != 0) s.Pout[1][i] = pn[1];
                        }
                    }
                    if (live)
                        for (int q = 0; q < s.nprobe; q++)
                            if (s.pr_c[q] < NE && s.pr_x[q] == x && s.pr_y[q] == y)
                                s.pout[(int64_t)(k - 1) * s.pstride + q] = (double)(NE > 1 && s.pr_c[q] == 1 ? en[NE - 1] : en[0]);
                }
            }
        }
        __syncthreads();
    }
}

/* The mode of a 2D call (0 TM, 1 TE) where the wave kernel takes it whole, else -1 (run as tile). */
int wave_mode(const pyr_kernel_call_t *call)
{
    const pyr_piece_t *pc = call->piece;
    const pyr_coef_t *k = call->coef;
    if (k->dims != 2 || k->periodic || pyr_maxwell_disp_table(k)) return -1;
    if (call->nboxes < 2 || call->nboxes % 2 || call->nboxes / 2 > INT32_MAX / 2) return -1;
    if (call->save_to || call->fill_from) return -1;
    for (int l = 2; l < call->nboxes; l++)
        if (!same_box(&call->boxes[l], &call->boxes[l % 2])) return -1;
    /* the whole grid, one plane */
    for (int a = 0; a < 2; a++)
        if (pc->box.lo[a] != 0 || pc->box.hi[a] != call->grid->n[a]) return -1;
    if (pc->box.lo[2] != 0 || pc->box.hi[2] != 1) return -1;
    const int tm = pc->buf[2][0] && pc->buf[3][0] && pc->buf[4][0] && !pc->buf[0][0] && !pc->buf[1][0] && !pc->buf[5][0];
    const int te = pc->buf[0][0] && pc->buf[1][0] && pc->buf[5][0] && !pc->buf[2][0] && !pc->buf[3][0] && !pc->buf[4][0];
    if (!tm && !te) return -1;
    if (call->nsources > kWaveSrc || call->nprobes > kWaveProbes || call->terms) return -1;
    for (int i = 0; i < call->nsources; i++)
        if (call->sources[i].field >= 3) return -1;
    for (int i = 0; i < call->nprobes; i++) {
        const int f = call->probes[i].field;
        if (f < 0 || f >= 6 || !pc->buf[f][0]) return -1;
    }
    return te;
}

/* The mode's components in the kernel's order (E first) */
void wave_fields(int te, int f[3])
{
    f[0] = te ? 0 : 2;
    f[1] = te ? 1 : 3;
    f[2] = te ? 5 : 4;
}

template <typename T, int K, bool TE>
pyr_status_t wave_launch_k(pyrcu::ctx_t *c, cudaStream_t st, const Wave<T> &s, dim3 grid, int threads, bool cpml)
{
    const size_t smem = (size_t)2 * 2 * K * (threads + 2) * sizeof(T);
    if (cpml) {
        if (smem > 48 * 1024) PYR_CU(cudaFuncSetAttribute(yee_wave<T, K, TE, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        yee_wave<T, K, TE, true><<<grid, threads, smem, st>>>(s);
    } else {
        if (smem > 48 * 1024) PYR_CU(cudaFuncSetAttribute(yee_wave<T, K, TE, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        yee_wave<T, K, TE, false><<<grid, threads, smem, st>>>(s);
    }
    PYR_CU(cudaGetLastError());
    return PYR_OK;
}

template <typename T, bool TE>
pyr_status_t wave_launch(pyrcu::ctx_t *c, cudaStream_t st, const Wave<T> &s, int K, dim3 grid, int threads, bool cpml)
{
    switch (K) {
    case 1: return wave_launch_k<T, 1, TE>(c, st, s, grid, threads, cpml);
    case 2: return wave_launch_k<T, 2, TE>(c, st, s, grid, threads, cpml);
    case 3: return wave_launch_k<T, 3, TE>(c, st, s, grid, threads, cpml);
    case 4: return wave_launch_k<T, 4, TE>(c, st, s, grid, threads, cpml);
    case 5: return wave_launch_k<T, 5, TE>(c, st, s, grid, threads, cpml);
    case 6: return wave_launch_k<T, 6, TE>(c, st, s, grid, threads, cpml);
    case 7: return wave_launch_k<T, 7, TE>(c, st, s, grid, threads, cpml);
    case 8: return wave_launch_k<T, 8, TE>(c, st, s, grid, threads, cpml);
    default: return pyr_fail(PYR_ERR_INTERNAL, "CUDA Maxwell kernel: wave with %d steps per launch", K);
    }
}

/* A call's steps by the wave kernel: ceil(h / K) launches (one more where
 * that count is odd, so the last writes the piece's buffers; a lone odd step
 * in place by the tile kernel, as_tile the call with tile's variant, where no
 * launch could take fewer steps). */
template <typename T>
pyr_status_t wave_steps(pyrcu::ctx_t *c, cudaStream_t st, const pyr_kernel_call_t *call, const pyr_kernel_call_t *as_tile, const double *table,
                        int te, const void *gather)
{
    const pyr_piece_t *pc = call->piece;
    const pyr_coef_t *k = call->coef;
    const int K = call->variant->p[0] ? call->variant->p[0] : kWaveKDefault;
    const int threads = call->variant->p[1] ? call->variant->p[1] : kWaveThreadsDefault;
    const int rows = call->variant->p[2] ? call->variant->p[2] : kWaveRowsDefault;
    int h = call->nboxes / 2, s0 = 0;
    int L = (h + K - 1) / K;
    if (L % 2) {
        if (h > L) L++;
        else {
            PYR_TRY(tile_step<T>(c, st, as_tile, table, 0, (const Sets<T> *)NULL, gather));
            s0 = 1;
            h--;
            L = h; /* h == L before: a step per launch, now an even count */
        }
    }
    if (!L) return PYR_OK;
    int f[3];
    wave_fields(te, f);
    int pf[4];
    pf[0] = pyr_maxwell_psi_field(te ? 1 : 2, 0);
    pf[1] = pyr_maxwell_psi_field(te ? 0 : 2, 1);
    pf[2] = pyr_maxwell_psi_field(te ? 5 : 3, 1);
    pf[3] = pyr_maxwell_psi_field(te ? 5 : 4, 0);
    const size_t layer = (size_t)pc->pitch * (size_t)call->grid->n[1] * sizeof(T);
    void *dev = NULL;
    PYR_TRY(copies(c, 7 * layer, &dev));
    T *mine[7], *other[7];
    bool cpml = false;
    for (int q = 0; q < 7; q++) {
        const int fld = q < 3 ? f[q] : pf[q - 3];
        mine[q] = fld >= 0 ? (T *)pc->buf[fld][0] : NULL;
        other[q] = mine[q] ? (T *)((char *)dev + q * layer) : NULL;
        if (q >= 3 && mine[q]) cpml = true;
    }
    if (cpml && !table) return pyr_fail(PYR_ERR_INTERNAL, "CUDA Maxwell kernel: CPML fields without profiles");
    Wave<T> s;
    memset(&s, 0, sizeof s);
    s.CA = (const T *)pc->buf[PYR_MAXWELL_CA][0];
    s.CB = (const T *)pc->buf[PYR_MAXWELL_CB][0];
    s.DH = (const T *)pc->buf[PYR_MAXWELL_DH][0];
    s.ca0 = (T)k->c[4];
    s.cb0 = (T)k->c[5];
    s.dh0 = (T)k->c[6];
    s.rh[0] = (T)k->c[0];
    s.rh[1] = (T)k->c[1];
    s.table = table;
    s.nmax = pyr_maxwell_cpml_naux(k) / 24;
    s.pitch = pc->pitch;
    s.n[0] = (int)call->grid->n[0];
    s.n[1] = (int)call->grid->n[1];
    for (int q = 0; q < 3; q++) {
        int lo[3], hi[3];
        if (!update_box(call, f[q], &call->boxes[q < (te ? 2 : 1) ? 1 : 0], lo, hi))
            for (int a = 0; a < 3; a++) lo[a] = hi[a] = 0;
        for (int a = 0; a < 2; a++) {
            s.rlo[q][a] = lo[a];
            s.rhi[q][a] = hi[a];
        }
    }
    for (int i = 0; i < call->nsources; i++) {
        const pyr_kernel_point_t *q = &call->sources[i];
        if (!pc->buf[q->field][0]) continue;
        const pyr_box_t *b = &call->boxes[1];
        const int64_t *nd = q->node;
        if (nd[0] < b->lo[0] || nd[0] >= b->hi[0] || nd[1] < b->lo[1] || nd[1] >= b->hi[1] || nd[2] < b->lo[2] || nd[2] >= b->hi[2])
            continue;
        s.src_c[s.nsrc] = q->field == f[0] ? 0 : 1;
        s.src_x[s.nsrc] = (int)nd[0];
        s.src_y[s.nsrc++] = (int)nd[1];
    }
    for (int i = 0; i < call->nprobes; i++) {
        const pyr_kernel_point_t *q = &call->probes[i];
        int cq = 0;
        for (int j = 0; j < 3; j++)
            if (f[j] == q->field) cq = j;
        s.pr_c[i] = cq;
        s.pr_x[i] = (int)q->node[0];
        s.pr_y[i] = (int)q->node[1];
    }
    s.nprobe = call->nprobes;
    s.pstride = call->nprobes;
    s.width = threads - 2 * K;
    s.rows = rows;
    const dim3 grid((unsigned)((s.n[0] + s.width - 1) / s.width), (unsigned)((s.n[1] + rows - 1) / rows));
    for (int l = 0, done = 0; l < L; l++) {
        /* the steps spread evenly over the launches (each at most K) */
        const int n = (h - done + (L - l) - 1) / (L - l);
        const int sa = s0 + done; /* the call's step of the launch's first */
        T *const *from = l % 2 ? other : mine, *const *to = l % 2 ? mine : other;
        for (int q = 0; q < 3; q++) {
            s.Fin[q] = from[q];
            s.Fout[q] = to[q];
        }
        for (int q = 0; q < 4; q++) {
            s.Pin[q] = from[3 + q];
            s.Pout[q] = to[3 + q];
        }
        s.nsteps = n;
        /* the sources' amplitudes in the call's order, per step (those outside the box were left out above) */
        int m = 0;
        for (int i = 0; i < call->nsources; i++) {
            const pyr_kernel_point_t *q = &call->sources[i];
            if (!pc->buf[q->field][0]) continue;
            const pyr_box_t *b = &call->boxes[1];
            const int64_t *nd = q->node;
            if (nd[0] < b->lo[0] || nd[0] >= b->hi[0] || nd[1] < b->lo[1] || nd[1] >= b->hi[1] || nd[2] < b->lo[2] || nd[2] >= b->hi[2])
                continue;
            for (int j = 0; j < n; j++) s.amp[j][m] = (T)call->amplitudes[(int64_t)(sa + j) * call->nsources + i];
            m++;
        }
        s.pout = call->probes_out ? call->probes_out + (int64_t)sa * call->nprobes : NULL;
        const pyr_status_t r = te ? wave_launch<T, true>(c, st, s, K, grid, threads, cpml) : wave_launch<T, false>(c, st, s, K, grid, threads, cpml);
        PYR_TRY(r);
        pyrcu::count(c->dev->stats.launches);
        done += n;
    }
    return PYR_OK;
}

} // namespace

#endif
