/* The Maxwell scheme's per-node material map ([material] map = FILE.npy with
 * label1 .. labelN): dispersive shapes written out as a label map (the nodes
 * each shape covers, by the library's own inside test, pyr_maxwell_shape_at)
 * give the same bits as the shapes themselves: 2D TM and TE and 3D, Drude,
 * Lorentz and Debye terms, CPML, under the naive method, pyramids over blocks
 * and skewed pieces, in core and streamed through a small memory budget, and
 * over two parts of the grid; a map under a shape lets the shape win; the
 * refusals: an undefined label (named with its NumPy index), a wrong shape, a
 * float dtype, labels without a map, a map with eps_file, and an unstable
 * label's terms (the largest stable dt named); 3D with CPML on every face sharing the layers'
 * slots.  With the argument cuda the plans run on the GPU (skipped, 77, without one), each
 * against the CPU's naive run. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "maxwell_util.h"
#include "schemes/maxwell.h"

/* An int32 (or other descr) .npy of the whole grid's labels, written by hand (NumPy's format 1.0). */
static void write_npy(const char *path, const char *descr, int ndim, const int64_t *shape, const void *data, size_t bytes)
{
    char sh[128] = "(";
    for (int i = 0; i < ndim; i++) snprintf(sh + strlen(sh), sizeof sh - strlen(sh), "%lld,%s", (long long)shape[i], i + 1 < ndim ? " " : "");
    strcat(sh, ")");
    char head[256];
    int n = snprintf(head, sizeof head, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, sh);
    while ((10 + n + 1) % 64) head[n++] = ' ';
    head[n++] = '\n';
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL, "cannot write %s", path);
    if (!f) return;
    const unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(n & 255), (unsigned char)(n >> 8)};
    fwrite(pre, 1, 10, f);
    fwrite(head, 1, (size_t)n, f);
    fwrite(data, 1, bytes, f);
    fclose(f);
}

/* The map of p's shapes: label k + 1 where shape k is the last over the node, 0 elsewhere. */
static void write_shape_map(const pyr_problem_t *p, const char *path)
{
    const int64_t nx = p->n[0], ny = p->n[1], nz = p->n[2], count = nx * ny * nz;
    int32_t *l = malloc((size_t)count * sizeof *l);
    for (int64_t z = 0; z < nz; z++)
        for (int64_t y = 0; y < ny; y++)
            for (int64_t x = 0; x < nx; x++) {
                const int64_t g[3] = {x, y, z};
                l[(z * ny + y) * nx + x] = pyr_maxwell_shape_at(p, g) + 1;
            }
    const int64_t shape[3] = {p->dims == 3 ? nz : ny, p->dims == 3 ? ny : nx, nx};
    write_npy(path, "<i4", p->dims == 3 ? 3 : 2, shape, l, (size_t)count * sizeof *l);
    free(l);
}

/* The problem with its shapes moved into a label map at path. */
static void as_map(const pyr_problem_t *p, const char *path, pyr_problem_t *q)
{
    write_shape_map(p, path);
    *q = *p;
    q->maxwell.nlabels = p->maxwell.nshapes;
    for (int k = 0; k < p->maxwell.nshapes; k++) q->maxwell.labels[k] = p->maxwell.shapes[k];
    q->maxwell.nshapes = 0;
    snprintf(q->maxwell.map_file, sizeof q->maxwell.map_file, "%s", path);
}

static void base(pyr_problem_t *p, int dims, int te)
{
    const int64_t n[3] = {36, 30, dims == 3 ? 22 : 1};
    const double len[3] = {0.35, 0.29, 0.21};
    make_maxwell(p, dims, n, len, te, PYR_DOUBLE, 40, 0.5);
    p->maxwell.cpml_cells = 4;
    p->maxwell.cpml_faces = dims == 3 ? 0x3 : 0xf; /* 3D: the layers of x only, so the terms keep slots of their own */
    CHECK_OK(pyr_problem_set(p, "material.shape1", dims == 3 ? "sphere 0.17 0.15 0.1 0.06 eps_r=2 drude=3 0.2"
                                                             : "sphere 0.17 0.15 0.07 eps_r=2 drude=3 0.2"));
    CHECK_OK(pyr_problem_set(p, "material.shape2", dims == 3 ? "box 0.08 0.14 0.06 0.24 0.05 0.16 eps_r=1.5 sigma=0.3 lorentz=1.2 4 0.5"
                                                             : "box 0.08 0.14 0.06 0.24 eps_r=1.5 sigma=0.3 lorentz=1.2 4 0.5"));
    CHECK_OK(pyr_problem_set(p, "material.shape3", dims == 3 ? "box 0.2 0.26 0.05 0.12 0.06 0.15 eps_r=3 mu_r=1.2 debye=2 0.05"
                                                             : "box 0.2 0.26 0.05 0.12 eps_r=3 mu_r=1.2 debye=2 0.05"));
    p->maxwell.nsources = 1;
    pyr_source_t *s = &p->maxwell.sources[0];
    s->component = dims == 2 && te ? PYR_HZ : PYR_EZ;
    s->node[0] = s->node_end[0] = 10, s->node[1] = s->node_end[1] = 20, s->node[2] = s->node_end[2] = dims == 3 ? 11 : 0;
    s->waveform = PYR_WAVE_RICKER, s->amplitude = 1, s->frequency = 15, s->delay = 0.08;
    p->maxwell.nprobes = 1;
    p->maxwell.probes[0].component = s->component;
    p->maxwell.probes[0].node[0] = 17, p->maxwell.probes[0].node[1] = 15, p->maxwell.probes[0].node[2] = dims == 3 ? 10 : 0;
}

static pyr_backend_kind_t backend = PYR_BACKEND_CPU;

static void same_bits(int dims, int te, const char *path)
{
    pyr_problem_t p, q;
    base(&p, dims, te);
    as_map(&p, path, &q);
    CHECK_OK(pyr_problem_validate(&q));
    char label[128];
    mx_result_t a = {0}, b = {0};
    snprintf(label, sizeof label, "%dD%s naive", dims, dims == 2 ? (te ? " TE" : " TM") : "");
    CHECK(mx_reference(&p, NULL, &a) == PYR_OK, "%s: shapes run: %s", label, pyr_last_error());
    CHECK(mx_reference(&q, NULL, &b) == PYR_OK, "%s: map run: %s", label, pyr_last_error());
    CHECK(mx_compare(label, "the shapes' run", &b, &a) == 0, "%s: the map's run differs from the shapes'", label);
    mx_free(&b);
    /* plans: pyramids over blocks and skewed pieces, in core and streamed; two parts */
    const uint64_t grid = (uint64_t)pyr_problem_nodes(&p) * sizeof(double);
    for (int v = 0; v < 5; v++) {
        pyr_options_t o;
        pyr_options_default(&o);
        o.backend = backend;
        o.method = PYR_METHOD_PYRAMID;
        o.height = 5;
        o.decomposition = v == 1 || v == 3 ? PYR_DECOMP_SKEWED : PYR_DECOMP_BLOCKS;
        if (v < 2) o.memory = 64 * grid; /* room for every field: in core */
        /* streamed: the smallest budget that plans the run (tests/heat_util.h) */
        if (v >= 2 && v < 4) o.memory = 4 * smallest_budget(&q, o, 8 * grid + (1u << 20)); /* four times: fewer, larger pieces, a quicker run */
        if (v == 4) snprintf(o.devices, sizeof o.devices, "0,0");
        /* a GPU's layout may take no piece small enough to stream these grids: the budget then plans in core */
        if (v >= 2 && v < 4 && backend == PYR_BACKEND_CUDA) {
            pyr_plan_t *plan = NULL;
            if (pyr_plan_create(&q, &o, &plan) != PYR_OK) o.memory = 0;
            pyr_plan_destroy(&plan);
        }
        snprintf(label, sizeof label, "%dD%s %s%s%s", dims, dims == 2 ? (te ? " TE" : " TM") : "", pyr_decomp_name(o.decomposition),
                 o.memory ? " streamed" : "", v == 4 ? " two parts" : "");
        pyr_status_t st = mx_run(&q, &o, NULL, &b);
        CHECK(st == PYR_OK, "%s: map run: %s", label, pyr_last_error());
        if (st == PYR_OK) {
            if (v >= 2 && v < 4 && backend == PYR_BACKEND_CPU) CHECK(b.info.tasks_per_pass > 1, "%s: the budget did not stream the run (one piece)", label);
            CHECK(mx_compare(label, "the shapes' naive run", &b, &a) == 0, "%s: differs", label);
        }
        mx_free(&b);
    }
    mx_free(&a);
}

/* 3D with CPML on every face: the terms' states share the layers' slots where the map's dispersive
 * labels keep clear of the layers (their nodes' bounding box, not the shapes'), and a plan's run
 * equals the naive one; labels reaching into a layer leave no slot and are refused. */
static void shared_slots(const char *path)
{
    pyr_problem_t p, q;
    base(&p, 3, 0);
    p.maxwell.cpml_cells = 2;
    p.maxwell.cpml_faces = 0x3f;
    as_map(&p, path, &q);
    CHECK_OK(pyr_problem_validate(&q));
    CHECK((pyr_maxwell_disp_fields(&q) & pyr_maxwell_psi_used(&q)) != 0, "the map's terms take no layer's slot");
    mx_result_t a = {0}, b = {0};
    CHECK(mx_reference(&q, NULL, &a) == PYR_OK, "3D shared slots: naive run: %s", pyr_last_error());
    pyr_options_t o;
    pyr_options_default(&o);
    o.backend = backend;
    o.method = PYR_METHOD_PYRAMID;
    o.height = 4;
    o.decomposition = PYR_DECOMP_BLOCKS;
    o.memory = 4 * smallest_budget(&q, o, 1u << 20);
    CHECK(mx_run(&q, &o, NULL, &b) == PYR_OK, "3D shared slots: streamed run: %s", pyr_last_error());
    CHECK(mx_compare("3D shared slots streamed", "the naive run", &b, &a) == 0, "3D shared slots: differs");
    mx_free(&a);
    mx_free(&b);
    /* label 1 (Drude) over the whole low z layer too: three terms' states and no free slot */
    const int64_t n = q.n[0] * q.n[1] * q.n[2];
    int32_t *l = malloc((size_t)n * sizeof *l);
    for (int64_t z = 0; z < q.n[2]; z++)
        for (int64_t y = 0; y < q.n[1]; y++)
            for (int64_t x = 0; x < q.n[0]; x++) {
                const int64_t g[3] = {x, y, z};
                const int k = pyr_maxwell_shape_at(&p, g);
                l[(z * q.n[1] + y) * q.n[0] + x] = z == 0 ? 1 : k + 1;
            }
    const int64_t shape[3] = {q.n[2], q.n[1], q.n[0]};
    write_npy(path, "<i4", 3, shape, l, (size_t)n * sizeof *l);
    free(l);
    CHECK_FAILS(pyr_problem_validate(&q), PYR_ERR_CONFIG, "auxiliary fields here");
}

/* A shape over the map wins: shapes 1 and 2 as labels, shape 3 kept as a shape over them, equal the
 * three shapes (the last over the others). */
static void shape_over_map(const char *path)
{
    pyr_problem_t p, q;
    base(&p, 2, 0);
    /* shape 3 over part of shape 2 and of the background */
    CHECK_OK(pyr_problem_set(&p, "material.shape3", "box 0.11 0.2 0.1 0.2 eps_r=3 mu_r=1.2 debye=2 0.05"));
    pyr_problem_t two = p;
    two.maxwell.nshapes = 2;
    as_map(&two, path, &q);
    q.maxwell.nshapes = 1;
    q.maxwell.shapes[0] = p.maxwell.shapes[2];
    mx_result_t a = {0}, b = {0};
    CHECK(mx_reference(&p, NULL, &a) == PYR_OK, "three shapes: %s", pyr_last_error());
    CHECK(mx_reference(&q, NULL, &b) == PYR_OK, "a shape over the map: %s", pyr_last_error());
    CHECK(mx_compare("a shape over the map", "the three shapes", &b, &a) == 0, "a shape over the map differs from the shapes");
    mx_free(&a);
    mx_free(&b);
}

static void refusals(const char *path)
{
    pyr_problem_t p, q;
    base(&p, 2, 0);
    as_map(&p, path, &q);
    /* an undefined label: label 3 dropped */
    pyr_problem_t r = q;
    r.maxwell.nlabels = 2;
    CHECK_FAILS(pyr_problem_validate(&r), PYR_ERR_CONFIG, "label 3 (first at index [");
    CHECK_FAILS(pyr_problem_validate(&r), PYR_ERR_CONFIG, "add material.label3");
    /* labels without a map; a map with eps_file */
    r = q;
    r.maxwell.map_file[0] = 0;
    CHECK_FAILS(pyr_problem_validate(&r), PYR_ERR_CONFIG, "without material.map");
    r = q;
    snprintf(r.maxwell.eps_file, sizeof r.maxwell.eps_file, "%s", path);
    CHECK_FAILS(pyr_problem_validate(&r), PYR_ERR_CONFIG, "material.map and material.eps_file both give");
    /* an unstable label: a Drude term far beyond the grid's rate */
    r = q;
    r.maxwell.labels[0].poles[0].p[0] = 1e4;
    CHECK_FAILS(pyr_problem_validate(&r), PYR_ERR_UNSTABLE, "map label 1 (material.label1)");
    CHECK_FAILS(pyr_problem_validate(&r), PYR_ERR_UNSTABLE, "the largest stable dt is about");
    /* a wrong shape, a float dtype, a label out of range (its index named) */
    char bad[600];
    snprintf(bad, sizeof bad, "%s.bad.npy", path);
    snprintf(r.maxwell.map_file, sizeof r.maxwell.map_file, "%s", bad);
    r = q;
    snprintf(r.maxwell.map_file, sizeof r.maxwell.map_file, "%s", bad);
    int32_t small[6] = {0};
    const int64_t s23[2] = {2, 3};
    write_npy(bad, "<i4", 2, s23, small, sizeof small);
    CHECK_FAILS(pyr_problem_validate(&r), PYR_ERR_FORMAT, "needs shape (30, 36)");
    const int64_t whole[2] = {30, 36};
    double *fl = calloc(30 * 36, sizeof *fl);
    write_npy(bad, "<f8", 2, whole, fl, 30 * 36 * sizeof *fl);
    CHECK_FAILS(pyr_problem_validate(&r), PYR_ERR_FORMAT, "needs an integer per node");
    uint8_t *u = calloc(30 * 36, 1);
    u[5 * 36 + 7] = 200;
    write_npy(bad, "|u1", 2, whole, u, 30 * 36);
    CHECK_FAILS(pyr_problem_validate(&r), PYR_ERR_CONFIG, "label 200 at index [5, 7]");
    /* uint8 labels are read as such: the same map in one byte a node runs */
    u[5 * 36 + 7] = 0;
    u[3 * 36 + 4] = 2;
    write_npy(bad, "|u1", 2, whole, u, 30 * 36);
    CHECK_OK(pyr_problem_validate(&r));
    free(fl);
    free(u);
    unlink(bad);
}

/* Problem-file syntax: map and labels set, read back and set again to the same materials. */
static void syntax(const char *path)
{
    pyr_problem_t p;
    base(&p, 2, 0);
    CHECK_OK(pyr_problem_set(&p, "material.map", path));
    CHECK_OK(pyr_problem_set(&p, "material.label2", "eps_r=2.5 sigma=0.1 lorentz=1.5 0.6 0.05 debye=3 0.3"));
    CHECK(p.maxwell.nlabels == 2 && p.maxwell.labels[1].eps_r == 2.5 && p.maxwell.labels[1].npoles == 2 &&
              p.maxwell.labels[1].poles[1].kind == PYR_POLE_DEBYE && p.maxwell.labels[0].eps_r == 0,
          "labels: %d", p.maxwell.nlabels);
    char v[1024];
    CHECK_OK(pyr_problem_get(&p, "material.label2", v, sizeof v));
    pyr_problem_t q = p;
    CHECK_OK(pyr_problem_set(&q, "material.label2", v));
    CHECK(!memcmp(&q.maxwell.labels[1], &p.maxwell.labels[1], sizeof p.maxwell.labels[1]), "label2 = '%s' reads back otherwise", v);
    CHECK_OK(pyr_problem_get(&p, "material.map", v, sizeof v));
    CHECK(!strcmp(v, path), "material.map reads '%s'", v);
    CHECK_FAILS(pyr_problem_set(&p, "material.label1", "box 0 1 0 1 eps_r=2"), PYR_ERR_CONFIG, "'box' is not a key=value option");
    CHECK_FAILS(pyr_problem_set(&p, "material.label17", "eps_r=2"), PYR_ERR_CONFIG, "label1 .. label16");
}

int main(int argc, char **argv)
{
    /* test_maxwell_material_map cuda: the plans' runs on the GPU (the naive reference on the CPU) */
    if (argc > 1 && !strcmp(argv[1], "cuda")) {
        if (pyr_gpu_count() == 0) {
            printf("no usable GPU: skipped\n");
            return 77;
        }
        backend = PYR_BACKEND_CUDA;
    }
    char path[512];
    snprintf(path, sizeof path, "test_maxwell_material_map_%d.npy", (int)getpid());
    syntax(path);
    same_bits(2, 0, path);
    same_bits(2, 1, path);
    same_bits(3, 0, path);
    shared_slots(path);
    shape_over_map(path);
    refusals(path);
    unlink(path);
    return check_report();
}
