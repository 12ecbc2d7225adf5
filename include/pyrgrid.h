/* pyrgrid — grid equations of difference schemes on GPUs and CPUs, including
 * grids larger than the GPU's memory (the pyramid method).
 *
 * The whole public C API.  The life of a run:
 *
 *     problem (what to solve) --> plan (how: method, decomposition, height,
 *     memory budget, backend) --> execute (a driver walks the plan, calling a
 *     backend's operations)
 *
 * Every fallible function returns a pyr_status_t; pyr_last_error() gives a
 * thread-local message a person can act on.  Library code never prints or
 * exits.  Functions that allocate say who owns the result; destroy functions
 * take T ** and set the caller's pointer to NULL. */
#ifndef PYRGRID_H
#define PYRGRID_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PYR_VERSION_MAJOR 0
#define PYR_VERSION_MINOR 2
#define PYR_VERSION_PATCH 0
#define PYR_VERSION_STRING "0.2.0"

/* Marks the public API: libpyrgrid is built with hidden visibility, and only
 * declarations carrying PYR_API are exported from the shared library. */
#ifndef PYR_API
#if defined(__GNUC__) || defined(__clang__)
#define PYR_API __attribute__((visibility("default")))
#else
#define PYR_API
#endif
#endif

/* The run-time version of the library ("0.2.0"): PYR_VERSION_STRING is the
 * version a program was compiled against, this the one it runs with. */
PYR_API const char *pyr_version(void);

/* ------------------------------------------------------------------ status */

/* One list, expanded into the enum and into pyr_status_string(). */
#define PYR_STATUS_LIST(X)                                                   \
    X(PYR_OK, "success")                                                     \
    X(PYR_ERR_ARG, "invalid argument")                                       \
    X(PYR_ERR_CONFIG, "invalid problem file or setting")                     \
    X(PYR_ERR_SIZE, "invalid grid size")                                     \
    X(PYR_ERR_UNSTABLE, "unstable time step")                                \
    X(PYR_ERR_IO, "file could not be read or written")                       \
    X(PYR_ERR_FORMAT, "malformed input file")                                \
    X(PYR_ERR_NOMEM, "out of host memory")                                   \
    X(PYR_ERR_BUDGET, "memory budget too small")                             \
    X(PYR_ERR_NODEVICE, "no usable GPU")                                     \
    X(PYR_ERR_DEVICE, "GPU error")                                           \
    X(PYR_ERR_DEVICE_NOMEM, "out of GPU memory")                             \
    X(PYR_ERR_UNSUPPORTED, "not supported")                                  \
    X(PYR_ERR_NUMERIC, "numerical failure")                                  \
    X(PYR_ERR_DIVERGED, "iteration diverged or stagnated")                   \
    X(PYR_ERR_CANCELLED, "cancelled")                                        \
    X(PYR_ERR_INTERNAL, "internal error")

typedef enum {
#define PYR_X_ENUM(name, text) name,
    PYR_STATUS_LIST(PYR_X_ENUM)
#undef PYR_X_ENUM
    PYR_STATUS_COUNT
} pyr_status_t;

/* Short fixed text of a status code ("memory budget too small"). */
PYR_API const char *pyr_status_string(pyr_status_t status);
/* Name of a status code ("PYR_ERR_BUDGET"). */
PYR_API const char *pyr_status_name(pyr_status_t status);
/* Detail of the last failure on this thread: what is wrong, the limit, and
 * what would work.  Valid until the next failing call on this thread. */
PYR_API const char *pyr_last_error(void);
/* Drop the last error message of this thread. */
PYR_API void pyr_clear_error(void);

#if defined(__GNUC__)
#define PYR_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define PYR_PRINTF(a, b)
#endif
/* Record a message (printf-style) for pyr_last_error() and return status, so
 * that a hook or a program built on the library fails in its words:
 * `return pyr_fail(PYR_ERR_IO, "%s: ...", path);`. */
PYR_API pyr_status_t pyr_fail(pyr_status_t status, const char *fmt, ...) PYR_PRINTF(2, 3);
/* Prefix the current message with context ("writing a.npy: " + the message)
 * and return status. */
PYR_API pyr_status_t pyr_fail_context(pyr_status_t status, const char *fmt, ...) PYR_PRINTF(2, 3);

/* --------------------------------------------------------------- precision */

typedef enum { PYR_FLOAT = 0, PYR_DOUBLE = 1 } pyr_precision_t;

/* Bytes of one value: 4 or 8. */
PYR_API size_t pyr_precision_size(pyr_precision_t p);
/* "float" / "double". */
PYR_API const char *pyr_precision_name(pyr_precision_t p);

/* ----------------------------------------------------------------- problem */

/* The equations (schemes) pyrgrid solves; each is described by a table of
 * fields, sub-steps and reach (src/schemes/scheme.h). */
typedef enum {
    PYR_EQ_HEAT = 0,   /* u_t = alpha^2 laplace(u), explicit scheme */
    PYR_EQ_POISSON = 1, /* -laplace(u) = f, Jacobi iteration */
    PYR_EQ_MAXWELL = 2  /* Maxwell's equations, the Yee scheme (FDTD) */
} pyr_equation_t;

typedef enum {
    PYR_INIT_SINE = 0, /* lowest eigenmode, zero on the boundary */
    PYR_INIT_GAUSS,    /* centred bump */
    PYR_INIT_RANDOM,   /* seeded uniform [0, 1) values, boundary included */
    PYR_INIT_FILE,     /* a .npy array of the grid's shape and dtype */
    PYR_INIT_ZERO      /* all zero (an initial guess with a zero boundary) */
} pyr_init_kind_t;

#define PYR_PATH_MAX 4096

/* Parameters of the heat equation u_t = alpha^2 laplace(u). */
typedef struct {
    double alpha; /* diffusivity */
    double dt;    /* time step; stable when sum_d alpha^2 dt / h_d^2 <= 1/2 */
} pyr_heat_params_t;

/* Right-hand sides of the Poisson equation. */
typedef enum {
    PYR_RHS_ZERO = 0, /* Laplace's equation: no f is stored or moved */
    PYR_RHS_SINE,     /* f = sum_d (pi / L_d)^2 prod_d sin(pi x_d / L_d): u = prod_d sin(pi x_d / L_d) solves it */
    PYR_RHS_FILE      /* a .npy array of the grid's shape and dtype */
} pyr_rhs_kind_t;

/* How the Poisson sweeps iterate (docs/poisson.md). */
typedef enum {
    PYR_ITER_JACOBI = 0, /* plain (or damped, omega != 1) Jacobi: O(N^2) sweeps on N nodes per axis; every method runs it */
    PYR_ITER_CHEBYSHEV,  /* Chebyshev-accelerated Jacobi: O(N) sweeps; reads the layer two sweeps back, so it runs on
                            one device (in core, or out of core in pieces: skewed included), not over several devices
                            or ranks nor from a restart, and only with omega = 1 */
    PYR_ITER_MULTIGRID   /* geometric multigrid cycles (method = multigrid, one device; the finest levels streamed from
                            host memory where they do not fit): O(1) cycles per digit;
                            steps counts cycles and tolerance bounds the relative residual (docs/poisson.md#multigrid) */
} pyr_iteration_t;

/* Multigrid's cycle (scheme.cycle) and smoother (scheme.smoother). */
typedef enum { PYR_CYCLE_V = 0, PYR_CYCLE_F } pyr_cycle_t;
typedef enum {
    PYR_SMOOTH_CHEBYSHEV = 0, /* Chebyshev-accelerated Jacobi over the upper part of each level's spectrum */
    PYR_SMOOTH_JACOBI         /* weighted Jacobi, weight 2d / (2d + 1) on a d-dimensional grid */
} pyr_smoother_t;

/* A face of a Poisson problem's grid. */
typedef enum {
    PYR_FACE_DIRICHLET = 0, /* the boundary nodes keep the initial field's values */
    PYR_FACE_NEUMANN        /* du/dn = flux: the face's nodes are unknowns, closed by a ghost node reflected through them */
} pyr_face_kind_t;

/* Parameters of the Poisson equation -laplace(u) = f, solved by Jacobi
 * sweeps u' = (sum_d (u[d-] + u[d+]) / h_d^2 + f) / (sum_d 2 / h_d^2),
 * damped as u' = u + omega (u' - u) when omega != 1.  The most sweeps is
 * pyr_problem_t.steps. */
typedef struct {
    double tolerance;    /* stop at the first check where the max-norm of the last sweep's change is < tolerance;
                            0 = run all the sweeps (the change is still reported) */
    int64_t check_every; /* sweeps between checks (>= 1) */
    double omega;        /* damping, in (0, 2); 1 = plain Jacobi */
    pyr_iteration_t iteration; /* PYR_ITER_JACOBI (default), PYR_ITER_CHEBYSHEV or PYR_ITER_MULTIGRID */
    pyr_cycle_t cycle;         /* multigrid: V (default) or F */
    int pre_smooth, post_smooth; /* multigrid: smoothing sweeps before and after each coarse correction (3 and 3) */
    pyr_smoother_t smoother;     /* multigrid: Chebyshev (default) or weighted Jacobi */
    pyr_rhs_kind_t rhs;
    char rhs_file[PYR_PATH_MAX]; /* for PYR_RHS_FILE */
    pyr_face_kind_t face[6];     /* [boundary] x-, x+, y-, y+, z-, z+ (docs/poisson.md#neumann-and-mixed-boundaries) */
    double flux[6];              /* Neumann faces: du/dn, the outward normal derivative (0: zero flux) */
} pyr_poisson_params_t;

/* Maxwell's equations on the Yee grid (FDTD), in MEEP's units: c = 1,
 * eps0 = mu0 = 1.  Every component is stored as an array of the node
 * grid's shape, x fastest, with the standard Yee offsets: Ex at (i+1/2, j,
 * k), Ey at (i, j+1/2, k), Ez at (i, j, k+1/2), Hx at (i, j+1/2, k+1/2), Hy
 * at (i+1/2, j, k+1/2), Hz at (i+1/2, j+1/2, k); a component is updated
 * where its neighbours exist; elsewhere (tangential E on the PEC faces, the
 * unused last half-cell along an axis) it stays at its initial value, which
 * pyr_field_init_state makes 0 (a pyr_execute_fields caller giving its own
 * fields should too).  The material of node (i, j, k) applies to the
 * components stored at that node.  2D grids take the TM mode (Ez, Hx, Hy)
 * or the TE mode (Hz, Ex, Ey).  Leapfrog: H(n+1/2) = H(n-1/2) - (dt/mu_r)
 * curl E(n), then E(n+1) = ca E(n) + cb curl H(n+1/2) with ca = (1 -
 * sigma dt/2eps_r)/(1 + sigma dt/2eps_r), cb = (dt/eps_r)/(1 + sigma
 * dt/2eps_r); the initial fields are E at step 0 and H at step -1/2. */
#define PYR_MAXWELL_MAX_SHAPES 16
#define PYR_MAXWELL_MAX_SOURCES 16
#define PYR_MAXWELL_MAX_PROBES 32

/* The six components, in the order of the scheme's fields. */
typedef enum { PYR_EX = 0, PYR_EY, PYR_EZ, PYR_HX, PYR_HY, PYR_HZ } pyr_component_t;

typedef enum { PYR_SHAPE_BOX = 0, PYR_SHAPE_SPHERE, PYR_SHAPE_CYLINDER } pyr_shape_kind_t;

/* A dispersive term of a material's permittivity (eps_r is then eps_inf), frequencies f in the
 * units of the monitors' (omega = 2 pi f), by an auxiliary differential equation per term:
 *   drude    p = {f_p, gamma}:            eps += -f_p^2 / (f^2 + i f gamma)
 *   lorentz  p = {delta_eps, f_0, gamma}: eps += delta_eps f_0^2 / (f_0^2 - f^2 - i f gamma)
 *   debye    p = {delta_eps, tau}:        eps += delta_eps / (1 - i 2 pi f tau) */
#define PYR_MAXWELL_MAX_POLES 4
/* Materials a label map may name ([material] map, label1 .. labelN). */
#define PYR_MAXWELL_MAX_LABELS 16
typedef enum { PYR_POLE_DRUDE = 1, PYR_POLE_LORENTZ, PYR_POLE_DEBYE } pyr_pole_kind_t;
typedef struct {
    pyr_pole_kind_t kind;
    double p[3];
} pyr_pole_t;

/* A shape of another material, rasterised at the nodes inside it (the
 * later shapes over the earlier ones).  Coordinates are physical (node i at
 * x = i * h_x).  box: lo[3]..hi[3]; sphere: centre lo[3], radius r;
 * cylinder: axis `axis` (0 x, 1 y, 2 z) through the centre lo[3], radius r,
 * from lo[axis] to hi[axis]; its dispersive terms poles[0 .. npoles - 1]. */
typedef struct {
    pyr_shape_kind_t kind;
    double lo[3], hi[3], r;
    int axis;
    double eps_r, sigma, mu_r;
    int npoles;
    pyr_pole_t poles[PYR_MAXWELL_MAX_POLES];
} pyr_shape_t;

typedef enum { PYR_WAVE_GAUSSIAN = 0, PYR_WAVE_RICKER, PYR_WAVE_SINE } pyr_waveform_t;

/* A soft source: after every update of its component, component +=
 * amplitude * w(t) at the node, at the component's time (t = (n+1) dt for
 * E(n+1), (n+1/2) dt for H(n+1/2)).  gaussian: exp(-((t - delay)/width)^2);
 * ricker (peak frequency f): (1 - 2 (pi f (t - delay))^2) exp(-(pi f (t -
 * delay))^2); sine: sin(2 pi f t), ramped up over the first `width` by the
 * raised cosine (1 - cos(pi t / width)) / 2 (width 0: no ramp).  A line
 * source spans the nodes from `node` to `node_end` along one axis (node_end
 * = node: a point source). */
typedef struct {
    pyr_component_t component;
    int64_t node[3], node_end[3];
    pyr_waveform_t waveform;
    double amplitude, frequency, width, delay;
} pyr_source_t;

/* A plane wave by total-field / scattered-field (TF/SF): the box of nodes
 * lo .. hi (inclusive; axes beyond dims 0 .. 0) is the total-field region,
 * where the incident wave adds to the fields; outside it only what is
 * scattered travels.  The incident wave runs through the background medium
 * along +axis (dir = +1) or -axis (dir = -1), its E along `component` (an E
 * component of the grid's mode, transverse to `axis`) and H = k x E / eta.
 * Its E one cell before the box's entry face (at lo - 1 along the axis for
 * dir = +1, hi + 1 for -1) is amplitude * w(t), w the waveform of a source
 * (pyr_source_t) at E's time.  The incident field is that of a 1D Yee grid
 * of the same h (along the axis), dt and background, so its numerical
 * dispersion is the 3D grid's along an axis.  The box's faces and the node
 * outside them lie in the background medium, off the CPML and the PEC walls.
 * Oblique incidence (angle != 0): k turns by `angle` degrees (|angle| < 90)
 * from the axis towards +tilt (another axis of the grid); E is `component`
 * when that is normal to the plane of axis and tilt, else (component = tilt)
 * it turns with k in that plane.  The incident field is then interpolated
 * from a 1D grid along k whose numerical dispersion is matched to the
 * grid's in that direction at one frequency (the waveform's; a Gaussian's
 * 1 / (2 pi width) unless frequency is given), so the box leaks a little;
 * the waveform is then given on the plane normal to k through the corner of
 * the box, grown by a node, that the wave reaches first. */
#define PYR_MAXWELL_MAX_PLANEWAVES 4
typedef struct {
    pyr_component_t component;
    int axis, dir;
    int64_t lo[3], hi[3];
    pyr_waveform_t waveform;
    double amplitude, frequency, width, delay;
    int tilt;     /* the axis k turns towards (angle != 0) */
    double angle; /* degrees; 0: along the axis */
} pyr_planewave_t;

/* A probe: the component's value at the node after every step. */
typedef struct {
    pyr_component_t component;
    int64_t node[3];
} pyr_probe_t;

#define PYR_MAXWELL_MAX_MONITORS 8 /* of each kind: dft1 .. dft8, flux1 .. flux8 */
#define PYR_MAXWELL_MAX_FREQS 64   /* a list of frequencies; a range (fmin:fmax:n) takes up to 100000 */

typedef enum { PYR_REGION_POINT = 0, PYR_REGION_BOX, PYR_REGION_PLANE } pyr_region_kind_t;

/* A frequency-domain monitor: the running discrete Fourier transform
 *     F(node, f) = sum over the run's steps n of F(node, t_n) exp(-i 2 pi f t_n) dt
 * of components at nodes, each at its own time (E after step n at t_n = (n+1) dt, H at
 * (n+1/2) dt), summed in double step by step, so that it is the same whatever the plan.
 *   dft:  the components (bit c for pyr_component_t c) at the nodes lo .. hi (inclusive): a
 *         point (lo = hi), a box, or a plane (lo[axis] = hi[axis]).
 *   flux: the plane normal to `axis` at node lo[axis] = hi[axis], over the cells between
 *         the nodes lo .. hi of the other axes; its power spectrum P(f) = Re sum over the
 *         cells of (E x H*) . n dA, the tangential components averaged to the cells'
 *         centres on the plane (as MEEP does), n along +axis.
 * A plane without limits (limits = 0) spans the grid less the CPML layers along the other
 * axes.  Frequencies: the list freq[0 .. nfreq - 1] (range = 0), or nfreq evenly spaced
 * from freq[0] to freq[1] (range = 1); each in [1 / (steps dt), 1 / (2 dt)], the run's
 * resolution and the grid's Nyquist frequency. */
typedef struct {
    pyr_region_kind_t region;
    unsigned components;
    int axis;   /* a plane's normal (0 x, 1 y, 2 z) */
    int limits; /* a plane: whether lo and hi along the other axes were given */
    int64_t lo[3], hi[3];
    int nfreq, range;
    double freq[PYR_MAXWELL_MAX_FREQS];
} pyr_monitor_t;

/* Where a run puts its monitors' transforms (pyr_spectra_create). */
typedef struct pyr_spectra pyr_spectra_t;

typedef struct {
    double courant;      /* dt = courant / sqrt(sum_d 1/h_d^2) when dt is 0; stable up to 1 (vacuum) */
    double dt;
    int te;              /* 2D: the TE mode (Hz, Ex, Ey); else TM (Ez, Hx, Hy) */
    /* background material, shapes over it, or per-node arrays from .npy files (which win) */
    double eps_r, sigma, mu_r;
    int nshapes;
    pyr_shape_t shapes[PYR_MAXWELL_MAX_SHAPES];
    char eps_file[PYR_PATH_MAX], sigma_file[PYR_PATH_MAX], mu_file[PYR_PATH_MAX];
    /* boundaries: PEC on every face; CPML layers of cpml_cells on the faces of cpml_faces
     * (bit 2a: low face of axis a, bit 2a+1: high face), Roden-Gedney with polynomial grading */
    int cpml_cells;
    unsigned cpml_faces;
    double cpml_order;       /* m, the grading's power (3) */
    double cpml_sigma_max;   /* 0: the optimum (m + 1) / (150 pi h) scaled to MEEP's units */
    double cpml_kappa_max;   /* (1: none) */
    double cpml_alpha_max;   /* (0.05) */
    int nsources, nprobes;
    pyr_source_t sources[PYR_MAXWELL_MAX_SOURCES];
    pyr_probe_t probes[PYR_MAXWELL_MAX_PROBES];
    int ndft, nflux;
    pyr_monitor_t dft[PYR_MAXWELL_MAX_MONITORS], flux[PYR_MAXWELL_MAX_MONITORS];
    pyr_spectra_t *spectra; /* where a run of the problem puts its monitors' transforms (pyr_spectra_attach); NULL: nowhere */
    int nplanewaves;
    pyr_planewave_t planewaves[PYR_MAXWELL_MAX_PLANEWAVES]; /* [source] planewave1 .. planewave4 */
    int npoles;                                             /* the background's dispersive terms */
    pyr_pole_t poles[PYR_MAXWELL_MAX_POLES];
    /* periodic axes (bit a: axis a; [boundary] periodic = y): the fields wrap around, the node
     * past the last is the first, so the period is n[a] cells; no CPML or PEC wall on them */
    unsigned periodic;
    /* a per-node material map ([material] map = FILE.npy, the whole grid's shape, an integer per
     * node): label 0 the background, label k (1 .. nlabels) the material labels[k - 1] (its eps_r,
     * sigma, mu_r and dispersive terms; kind and geometry unused); the shapes lie over it */
    char map_file[PYR_PATH_MAX];
    int nlabels;
    pyr_shape_t labels[PYR_MAXWELL_MAX_LABELS];
} pyr_maxwell_params_t;

/* What to solve: a grid, a scheme with its parameters, an initial field.
 * Axis 0 is x (fastest in memory), 1 is y, 2 is z; axes beyond `dims` have
 * n = 1.  Nodes include the boundary nodes, which keep their initial values
 * (boundary of the first kind).
 *
 * Upgrading from 0.1 (a mechanical change): the heat equation's `alpha` and
 * `dt` moved into `heat` (p.alpha -> p.heat.alpha, p.dt -> p.heat.dt);
 * CHANGELOG.md#changed-public-struct-layouts-since-010 lists every change. */
typedef struct {
    /* the grid */
    int dims;                 /* 1, 2 or 3 */
    int64_t n[3];             /* nodes per axis */
    double length[3];         /* physical length per axis; h = L / (n - 1) */
    pyr_precision_t precision;
    /* the scheme */
    pyr_equation_t equation;
    int64_t steps;            /* time steps (heat); the most sweeps (poisson) */
    pyr_heat_params_t heat;       /* equation = PYR_EQ_HEAT */
    pyr_poisson_params_t poisson; /* equation = PYR_EQ_POISSON */
    pyr_maxwell_params_t maxwell; /* equation = PYR_EQ_MAXWELL */
    /* the initial field (and the boundary values) */
    pyr_init_kind_t init;
    uint64_t seed;            /* for PYR_INIT_RANDOM */
    char init_file[PYR_PATH_MAX]; /* for PYR_INIT_FILE */
    /* A part of a larger grid (the library sets these for each device or MPI
     * rank of a run over several; zero: the problem is the whole grid): this
     * problem's nodes are nodes origin .. origin + n - 1 of a grid of whole[]
     * nodes, and everything placed by position (spacings, Maxwell's absorbing
     * layers, walls, materials, sources and probes, random initial values)
     * is placed on the whole grid. */
    int64_t origin[3], whole[3];
} pyr_problem_t;

/* A 2D 1025x1025 double heat problem on the unit square with a sine mode;
 * the Poisson parameters are set to their defaults too (tolerance 0,
 * check_every 20, omega 1, f = 0), so changing `equation` is enough. */
PYR_API void pyr_problem_default(pyr_problem_t *problem);
/* The name of an equation ("heat", "poisson"), and the equation of a name
 * (0 when there is none of that name). */
PYR_API const char *pyr_equation_name(pyr_equation_t equation);
PYR_API int pyr_equation_from_name(const char *name, pyr_equation_t *out);
/* Checks sizes and the scheme's parameters (heat: the stability limit
 * sum_d alpha^2 dt / h_d^2 <= 1/2); the message says what would work. */
PYR_API pyr_status_t pyr_problem_validate(const pyr_problem_t *problem);
/* Grid spacing of an axis. */
PYR_API double pyr_problem_h(const pyr_problem_t *problem, int axis);
/* Nodes of the whole grid along an axis (whole[axis] for a part, else n[axis]). */
PYR_API int64_t pyr_problem_whole(const pyr_problem_t *problem, int axis);
/* Heat: r_d = alpha^2 dt / h_d^2 of an axis (0 for axes beyond dims). */
PYR_API double pyr_problem_r(const pyr_problem_t *problem, int axis);
/* Number of nodes, and of interior nodes (those the scheme updates). */
PYR_API int64_t pyr_problem_nodes(const pyr_problem_t *problem);
PYR_API int64_t pyr_problem_interior(const pyr_problem_t *problem);

/* ------------------------------------------------------------------- field */

/* A grid function on the host, C order with x fastest: data[(z*ny + y)*nx + x]. */
typedef struct {
    int dims;
    int64_t n[3];
    pyr_precision_t precision;
    void *data;
} pyr_field_t;

/* Allocate a field of the problem's shape (contents undefined).  The caller
 * owns it and releases it with pyr_field_destroy. */
PYR_API pyr_status_t pyr_field_create(const pyr_problem_t *problem, pyr_field_t **field);
/* A field around the caller's buffer, without a copy: `dims` axes of n[0]
 * (x, fastest) .. n[2] nodes (n[d] = 1 beyond dims), values of `precision`
 * in C order (a NumPy array of shape (n[2], n[1], n[0]) that is
 * C-contiguous).  The caller keeps the buffer: it must outlive the field,
 * and pyr_field_destroy frees only the header made here.  Runs update the
 * buffer in place; on a GPU it is registered (pinned) for the length of a
 * run. */
PYR_API pyr_status_t pyr_field_wrap(int dims, const int64_t n[3], pyr_precision_t precision, void *data, pyr_field_t **field);
/* A field of zeros in memory of the library's (its dims, n and precision
 * as pyr_field_wrap's), made without writing it: fresh pages that read as
 * zero and cost nothing until touched.  A run that starts from it while it
 * still holds zeros (the library reads the pages written since, if any)
 * sets it on a GPU instead of uploading it; values written into its data
 * before a run are used as any field's.  pyr_field_destroy frees it. */
PYR_API pyr_status_t pyr_field_create_zero(int dims, const int64_t n[3], pyr_precision_t precision, pyr_field_t **field);
/* A field around a buffer in the memory of CUDA device `device` (-1: the
 * one CUDA places the pointer in), such as a CuPy array's or a PyTorch
 * tensor's (the CUDA array interface's or DLPack's pointer), without a copy,
 * laid out as pyr_field_wrap's.  `stream` is the CUDA stream
 * the caller queues its writes to the buffer on, numbered as the CUDA array
 * interface does: 1 (or 0) the legacy default stream, 2 the per-thread
 * default stream, any other value a cudaStream_t of that device.  A run (or
 * pyr_field_copy) first waits for the work queued there before it, and
 * returns with its own writes done.  Runs whose plan takes such fields
 * (pyr_plan_takes_field: an in-core plan of the CUDA backend on that
 * device) compute on the device alone: the executor copies the buffer into
 * its own (rows padded to its pitch) and the result back, device to device;
 * other plans refuse the field.  Refused by a library without the CUDA
 * backend, and for a pointer CUDA does not place in that device's memory.
 * pyr_field_destroy frees the header only. */
PYR_API pyr_status_t pyr_field_wrap_device(int dims, const int64_t n[3], pyr_precision_t precision, void *data, int device,
                                           uintptr_t stream, pyr_field_t **field);
/* Copy the values of src into dst (fields of the same shape and precision,
 * each in host memory or a GPU's: pyr_field_wrap_device), after the work
 * queued on a device field's stream; returns once the copy is done. */
PYR_API pyr_status_t pyr_field_copy(pyr_field_t *dst, const pyr_field_t *src);
/* Release a field made by pyr_field_create (header and data) or
 * pyr_field_wrap / pyr_field_wrap_device (the header only). */
PYR_API void pyr_field_destroy(pyr_field_t **field);
/* Fill with the problem's initial field (reads the .npy for PYR_INIT_FILE). */
PYR_API pyr_status_t pyr_field_init(pyr_field_t *field, const pyr_problem_t *problem);
PYR_API int64_t pyr_field_count(const pyr_field_t *field);
/* The exact solution of the difference scheme for PYR_INIT_SINE after `steps`
 * steps (amplitude times the discrete decay factor to the power steps), and
 * of the differential equation at time steps*dt. */
PYR_API pyr_status_t pyr_field_sine_discrete(pyr_field_t *field, const pyr_problem_t *problem, int64_t steps);
PYR_API pyr_status_t pyr_field_sine_continuous(pyr_field_t *field, const pyr_problem_t *problem, int64_t steps);

/* ----------------------------------------------------------------- options */

typedef enum { PYR_BACKEND_AUTO = 0, PYR_BACKEND_CPU, PYR_BACKEND_CUDA } pyr_backend_kind_t;
/* naive: the whole grid resident on the device; trivial: pieces streamed every
 * step; pyramid: pieces streamed once per pass of n steps; longvector (the
 * CUDA backend, 2D heat, one GPU: refused over several devices or MPI
 * ranks): the naive method's resident grid stepped by
 * whole-vector cuBLAS operations, the paper's long-vector algorithm
 * (docs/theory.md#the-long-vector-method; slow by design: for the model and
 * comparison); multigrid (Poisson with scheme.iteration = multigrid, in
 * core on one device): the level loop of src/solvers/multigrid/.  auto picks
 * multigrid for that iteration, else naive or pyramid. */
typedef enum { PYR_METHOD_AUTO = 0, PYR_METHOD_NAIVE, PYR_METHOD_TRIVIAL, PYR_METHOD_PYRAMID, PYR_METHOD_LONGVECTOR, PYR_METHOD_MULTIGRID } pyr_method_t;
typedef enum {
    PYR_DECOMP_AUTO = 0,
    PYR_DECOMP_SEGMENTS, /* 1D grids: segments of x */
    PYR_DECOMP_STRIPS,   /* 2D grids: strips of rows ("1D decomposition") */
    PYR_DECOMP_BLOCKS,   /* 2D grids: square-ish blocks ("2D decomposition"); 3D grids: cubes */
    PYR_DECOMP_SLABS,    /* 3D grids: slabs of z-planes */
    PYR_DECOMP_SKEWED    /* 2D and 3D grids, one-field schemes: pieces of whole rows / planes whose time layers lean back
                            one node per step, each taking the layers it shares with the previous piece from the device
                            (no halo recomputed, every value moved once per pass; plan/skewed.h) */
} pyr_decomp_t;

/* How the planner makes automatic choices (height, decomposition), as in
 * FFTW: ESTIMATE from the performance model and this machine's calibration
 * (the wisdom, see pyr_wisdom_import_file); MEASURE times the few best
 * candidates briefly, keeps the fastest and records it in the wisdom.
 * REFINE (a plan of one device) makes the model's choice and names the
 * model's best few candidates; the run then computes its first passes with
 * each of them in turn (real steps of the run: no step is repeated),
 * timing each one's steady rate, runs the remaining steps with the fastest
 * and records it in the wisdom, where the next plan of the same shape finds
 * it and tries nothing.  A run too short for the trials, or whose scheme
 * carries state a change of plan would restart (point sources, monitors,
 * absorbing layers' auxiliaries), runs the model's choice; the plan's
 * notice says which and why. */
typedef enum { PYR_PLAN_ESTIMATE = 0, PYR_PLAN_MEASURE, PYR_PLAN_REFINE } pyr_plan_mode_t;

/* How the host grid is reached by the device's copies.  PIN registers it
 * (page-locked: copies at full PCIe speed, docs/model-and-wisdom.md#host-memory);
 * STAGE leaves it pageable and moves every copy through small pinned buffers
 * of the library's.  AUTO pins unless the fields would lock most of the host's RAM
 * (all but max(8 GiB, 1/8) of it), and stages when pinning fails; the plan
 * and the run say which (pyr_plan_info_t, pyr_run_info_t). */
typedef enum { PYR_HOST_AUTO = 0, PYR_HOST_PIN, PYR_HOST_STAGE } pyr_host_memory_t;
/* "pinned", "staged", or "none" (AUTO in a plan or run: no device copies) */
PYR_API const char *pyr_host_memory_name(pyr_host_memory_t h);

/* How to solve.  Zero-initialised options (or pyr_options_default) mean
 * "choose automatically" everywhere. */
typedef struct {
    pyr_backend_kind_t backend;
    int device;              /* GPU index for the CUDA backend */
    int threads;             /* CPU threads, 0 = all cores */
    pyr_method_t method;
    pyr_decomp_t decomposition;
    int64_t height;          /* pyramid height n (steps per pass), 0 = auto */
    uint64_t memory;         /* device memory budget in bytes, 0 = auto */
    int64_t piece;           /* device extent of a piece along the split axis:
                                rows R of a strip, side B of a block, planes of
                                a slab, nodes of a segment; 0 = largest that fits */
    int64_t snapshot_every;  /* passes end at multiples of this step (0 = none) */
    pyr_plan_mode_t plan_mode; /* how automatic choices are made (estimate by default) */
    int slots;               /* pieces in flight (0 = auto); k > 1 of them share k + 2
                                buffers of one time layer (k + 1 in 3D): more
                                overlap transfers with compute, fewer leave
                                room for larger pieces and less redundant work */
    char kernel[32];         /* kernel variant, "" = chosen by the planner (wisdom, else the
                                kernel's default): e.g. "fused:5" (CUDA, 5 steps per launch),
                                "plain" (one step per launch), "wave" / "sweep" (CPU);
                                `pyrgrid info` lists them */
    /* Several devices in this process, and MPI ranks (include/pyrgrid_mpi.h): the grid is cut
     * into parts, each run on one device with halos of H steps' reach exchanged every H steps;
     * the result is the same bits as on one device. */
    char devices[64];        /* "" = one device (`device`); "all" (every GPU); or a list "0,1": one part
                                per entry (an index may repeat: two contexts on one GPU); the CPU
                                backend has device 0 only ("0,0" runs two parts on it) */
    char partition[32];      /* how the grid is cut: "" or "auto" (the model chooses), "slabs" (along the
                                slowest axis), "blocks", or parts per axis "AxBxC" (x, y, z) */
    int64_t exchange;        /* H, steps between halo exchanges (0 = auto: the pyramid height when a
                                part streams pieces, else the model's choice) */
    pyr_host_memory_t host_memory; /* pin the host grid, stage copies, or auto (above) */
} pyr_options_t;

PYR_API void pyr_options_default(pyr_options_t *options);
PYR_API const char *pyr_method_name(pyr_method_t m);
PYR_API const char *pyr_decomp_name(pyr_decomp_t d);
/* The decomposition named `name` ("segments", "strips", "blocks", "slabs";
 * "auto" too when allow_auto); 0 when there is none of that name. */
PYR_API int pyr_decomp_from_name(const char *name, int allow_auto, pyr_decomp_t *out);
/* Whether decomposition d applies to a grid of `dims` dimensions (auto always does). */
PYR_API int pyr_decomp_fits(pyr_decomp_t d, int dims);
PYR_API const char *pyr_backend_name(pyr_backend_kind_t b);
/* Parse "256MiB", "1.5G", "4096" into bytes (K/M/G/T decimal-free binary
 * suffixes: K = KiB = 1024). */
PYR_API pyr_status_t pyr_parse_bytes(const char *text, uint64_t *bytes);

/* ------------------------------------------------------- handles and keys */

/* Problems and options by the keys of problem files, for callers that must
 * not depend on the structs' layout: bindings (the Python module uses only
 * these), and programs built against one version of the library and run
 * with another, where a struct that gained members would be misread.  The
 * library allocates the structs, so their size never enters the caller's
 * code, and each value is set and read as text under its problem-file key
 * ("grid.nx", "scheme.alpha", "initial.kind", "rhs.file", "run.memory";
 * docs/problem-files.md lists them), checked exactly as a problem file's line is.
 *
 * A problem with pyr_problem_default's values; the caller owns it and
 * releases it with pyr_problem_destroy. */
PYR_API pyr_status_t pyr_problem_create(pyr_problem_t **problem);
PYR_API void pyr_problem_destroy(pyr_problem_t **problem);
/* Set a key of [grid], [scheme], [initial] or [rhs] from its text ("65",
 * "1e-6", "poisson").  grid.dims = d also gives the axes beyond d one node;
 * scheme.iterations and scheme.steps both set the most steps (sweeps).  Keys
 * of [run] are options (pyr_options_set); [output] and the restart keys
 * initial.step and initial.t are the pyrgrid program's.  On failure the
 * problem is unchanged and the message names the key and what would work. */
PYR_API pyr_status_t pyr_problem_set(pyr_problem_t *problem, const char *key, const char *value);
/* The value of a key as text ("65", "1.0000000000000001e-06", "heat"),
 * written to value (size bytes, terminated).  PYR_ERR_CONFIG for a key it
 * does not know, PYR_ERR_ARG when the text does not fit (the message says
 * how many bytes it needs). */
PYR_API pyr_status_t pyr_problem_get(const pyr_problem_t *problem, const char *key, char *value, size_t size);
/* Read a problem file as `pyrgrid run` does: defaults, then the file's keys
 * (its [output] keys are read and left to the program), the checks of a
 * whole file, inputs relative to the file's folder, the grid's size from
 * initial.file where the file gives none.  A restart (initial.step, or an
 * HDF5 result as initial.file) leaves problem->steps at the steps that
 * remain.  options may be NULL.  On failure neither is changed. */
PYR_API pyr_status_t pyr_problem_load_file(pyr_problem_t *problem, pyr_options_t *options, const char *path);

/* A problem file held whole, as the pyrgrid program reads it: the problem,
 * the options, and the keys a program acts on (the [output] section, the
 * restart's step and time), which the problem and options do not carry. */
typedef struct pyr_problem_file pyr_problem_file_t;
/* Read `path` over the defaults, apply the overrides "section.key=value" in
 * order (sets: nsets of them, may be NULL for 0), and check the whole (keys
 * of another scheme, a Poisson problem's stopping rule).  Messages name the
 * file, the line or override, and a likely fix; *file is NULL on failure. */
PYR_API pyr_status_t pyr_problem_file_load(const char *path, const char *const *sets, int nsets, pyr_problem_file_t **file);
/* Then read what the inputs decide, as pyr_problem_load_file does: the
 * grid's size from initial.file where the file gives none, and a restart
 * (initial.step, or an HDF5 result as initial.file): the problem's steps
 * become the steps that remain. */
PYR_API pyr_status_t pyr_problem_file_read_inputs(pyr_problem_file_t *file);
PYR_API void pyr_problem_file_destroy(pyr_problem_file_t **file);
/* The file's problem and options, owned by the file (a program may change
 * them before planning). */
PYR_API pyr_problem_t *pyr_problem_file_problem(pyr_problem_file_t *file);
PYR_API pyr_options_t *pyr_problem_file_options(pyr_problem_file_t *file);
/* The keys only a program acts on.  Strings are "" when not given and stay
 * valid while the file does.  Members are only ever added at the end
 * (pyr_struct_size tells a binding the size). */
typedef struct {
    const char *source;        /* the file it was read from */
    const char *field;         /* output.field: .npy or .h5 (HDF5 with an XDMF sidecar) */
    const char *image;         /* output.image: a PNG heat map */
    const char *probes;        /* output.probes: Maxwell's probe series (CSV) */
    int64_t every;             /* output.every: snapshots every so many steps (0: none) */
    int image_component;       /* output.component: Maxwell's field in the image (-1: the mode's default) */
    int compression;           /* output.compression: gzip level of HDF5 outputs (0: none) */
    int64_t start_step;        /* the step initial.file holds (0: a fresh start) */
    double start_t;            /* the time initial.file holds */
    int64_t end_step;          /* the step the run ends at (scheme.steps) */
    const char *start_dataset; /* HDF5 initial.file: the dataset read ("u", or a snapshot's) */
    const char *spectra;       /* output.spectra: Maxwell's monitors' spectra (CSV, pyr_spectra_write_csv) */
    int image_width;           /* output.image_width: pixels across the images (0: each image's default) */
    int colormap;              /* output.colormap: the heat map's pyr_colormap_t (pyrgrid_output.h; PYR_COLORMAP_AUTO
                                  when not given) */
    const char *probes_png;    /* output.probes_png: a plot of Maxwell's probe series (PNG) */
    const char *spectra_png;   /* output.spectra_png: a plot of Maxwell's flux spectra (PNG, pyr_spectra_write_png) */
} pyr_problem_outputs_t;
PYR_API pyr_status_t pyr_problem_file_outputs(const pyr_problem_file_t *file, pyr_problem_outputs_t *outputs);

/* Options with pyr_options_default's values (automatic choices); owned by
 * the caller, released with pyr_options_destroy. */
PYR_API pyr_status_t pyr_options_create(pyr_options_t **options);
PYR_API void pyr_options_destroy(pyr_options_t **options);
/* Set a key of [run] ("run.memory" = "4GiB", "run.backend" = "cpu",
 * "run.height" = "auto").  run.rows and run.block set the piece's extent;
 * run.block also chooses blocks when the decomposition is auto. */
PYR_API pyr_status_t pyr_options_set(pyr_options_t *options, const char *key, const char *value);
PYR_API pyr_status_t pyr_options_get(const pyr_options_t *options, const char *key, char *value, size_t size);

/* The problem and the options as JSON objects ({"grid": {"dims": 2, "nx":
 * 65, ...}, "scheme": {...}, ...}; the keys of the problem's equation only),
 * snprintf-style: text receives at most size bytes (terminated, may be
 * NULL with size 0) and the length of the whole text is returned. */
PYR_API size_t pyr_problem_json(const pyr_problem_t *problem, char *text, size_t size);
PYR_API size_t pyr_options_json(const pyr_options_t *options, char *text, size_t size);

/* sizeof of a public struct by its name ("pyr_run_info_t", "pyr_hooks_t",
 * "pyr_lgs_options_t", "pyr_frames_options_t", ...; 0 for a name it does not
 * know), so that a binding that lays out a struct itself can check that it
 * agrees with the library it runs with instead of misreading it. */
PYR_API size_t pyr_struct_size(const char *name);

/* -------------------------------------------------------------------- plan */

typedef struct pyr_plan pyr_plan_t;

/* Values moved and computed by a run (or predicted exactly by a plan). */
typedef struct {
    uint64_t uploaded;   /* values sent host -> device */
    uint64_t downloaded; /* values sent device -> host */
    uint64_t computed;   /* values computed by the stencil */
    uint64_t redundant;  /* of which recomputed (computed minus useful) */
} pyr_counters_t;

/* What a plan will do, for reports. */
typedef struct {
    pyr_method_t method;
    pyr_decomp_t decomposition;
    pyr_backend_kind_t backend;
    int64_t height;            /* steps per full pass */
    int64_t passes;
    int64_t tasks_per_pass;
    int64_t pieces[3];         /* pieces along each axis */
    int64_t piece_extent[3];   /* device extent of the largest piece per axis */
    int64_t result_extent[3];  /* result extent of the largest piece per axis */
    int slots;                 /* piece buffers the backend keeps in flight */
    uint64_t device_bytes;     /* device memory the executor will use */
    uint64_t budget_bytes;     /* the budget it was planned against */
    double redundancy;         /* computed / useful values */
    pyr_counters_t counts;     /* exact counts for the whole run */
    const char *notice;        /* a choice the user should hear about, or "" */
    char kernel[32];           /* the kernel variant the plan runs ("fused:5", "wave", ...) */
    int fields;                /* fields the pieces carry (u; u and f; ...) */
    pyr_host_memory_t host_memory; /* how the plan means to reach the host grid: PIN or STAGE (or AUTO
                                      where no copies to a device are made: the CPU backend) */
    uint64_t host_bytes;       /* bytes of the host fields the device's copies read and write */
} pyr_plan_info_t;

/* Build a plan for the problem under the options.  Fails with PYR_ERR_BUDGET
 * (naming the smallest budget that works) when no piece fits.  The caller owns
 * the plan. */
PYR_API pyr_status_t pyr_plan_create(const pyr_problem_t *problem, const pyr_options_t *options,
                             pyr_plan_t **plan);
PYR_API void pyr_plan_destroy(pyr_plan_t **plan);
/* What the whole run will do.  A plan over several devices (run.devices)
 * sums over its parts: device_bytes, budget_bytes (the total budget),
 * host_bytes, tasks_per_pass and the counts (redundancy against the whole
 * grid's useful work); slots, passes, pieces and the extents are the
 * largest part's; method, decomposition, height and kernel are the parts'
 * when they agree, else PYR_METHOD_AUTO, PYR_DECOMP_AUTO, 0 and "mixed";
 * host_memory is PYR_HOST_STAGE when any part stages. */
PYR_API pyr_status_t pyr_plan_get_info(const pyr_plan_t *plan, pyr_plan_info_t *info);
/* The parts of a plan over several devices: 1 for a plan of one device
 * (0 for NULL); part i (0 .. count - 1) as pyr_plan_get_info describes a
 * plan of one device (its local grid: the box it owns grown by its halo). */
PYR_API int pyr_plan_part_count(const pyr_plan_t *plan);
PYR_API pyr_status_t pyr_plan_part_info(const pyr_plan_t *plan, int part, pyr_plan_info_t *info);
/* How the grid was cut, one line ("2 parts (1 rank x 2 devices, slabs
 * 1x1x2), H = 8 (the model's), halos 8 nodes deep"; "" for a plan of one
 * device), snprintf-style as pyr_problem_json. */
PYR_API size_t pyr_plan_partition(const pyr_plan_t *plan, char *text, size_t size);
/* Where the performance model's constants of the plan came from ("wisdom
 * of this machine ...", "the default constants: ..."), snprintf-style. */
PYR_API size_t pyr_plan_model_source(const pyr_plan_t *plan, char *text, size_t size);
/* What the performance model predicts for the plan, in seconds: the whole
 * run, or (first_step > 0) the passes that start at or after that step (to
 * compare with timings that skip a warm-up pass), and the parts of it.
 * Members are only ever added at the end. */
typedef struct {
    double seconds;  /* the prediction */
    double upload;   /* of which moving values to the device */
    double compute;  /* computing */
    double download; /* moving values back */
    double host;     /* band copies into the host grid */
} pyr_prediction_t;
PYR_API pyr_status_t pyr_plan_predict(const pyr_plan_t *plan, int64_t first_step, pyr_prediction_t *prediction);
/* The long-vector method's model of a plan of that method (`pyrgrid sweep
 * --sizes`; docs/theory.md#the-long-vector-method): a step is `calls`
 * library calls of t_kernel each plus, per wave of `threads` elements of
 * the range of `length` elements, `adds` geam adds, `axpys` axpys and
 * `scals` scals.  Members are only ever added at the end. */
typedef struct {
    double t_kernel, t_add, t_saxpy, t_scal; /* seconds: per call; per wave of each operation */
    double threads;                          /* elements per wave (0: not known) */
    int calls, adds, axpys, scals;           /* per step */
    double rise;                             /* where calibration sees the staircase start: this fraction over the floor */
    int64_t length;                          /* M: the range the plan's steps work on */
    int64_t pitch;                           /* the plan's row pitch, in values */
    int64_t align;                           /* the device's pitch alignment, in values (1: none) */
    int64_t waves;                           /* ceil(M / threads) */
    double step_seconds;                     /* the model's seconds per step */
} pyr_longvector_model_t;
PYR_API pyr_status_t pyr_plan_longvector_model(const pyr_plan_t *plan, pyr_longvector_model_t *model);
/* The staircase over square grids of N = n_lo .. n_hi interior nodes per
 * axis: the N at which ceil(M / threads) grows (rows padded to `align`
 * values), in increasing order, at most max of them in pos; returns how many
 * there are in all (0 when threads is not positive). */
PYR_API int pyr_longvector_staircase(double threads, int64_t align, int64_t n_lo, int64_t n_hi, int64_t *pos, int max);
/* A byte count as text ("512 B", "1.5 MiB", "2.004 GiB": four digits), as plans print it. */
PYR_API void pyr_format_bytes(uint64_t bytes, char *text, size_t size);
/* Human-readable description of the plan and, for comparison, the trivial
 * method's plan under the same budget. */
PYR_API pyr_status_t pyr_plan_print(const pyr_plan_t *plan, FILE *out);
/* The plan as a JSON object: pyr_plan_info_t's members by name, the model's
 * predicted seconds and where its constants came from (`pyrgrid plan
 * --json`).  snprintf-style, as pyr_problem_json. */
PYR_API size_t pyr_plan_json(const pyr_plan_t *plan, char *text, size_t size);

/* ------------------------------------------------------------------ wisdom */

/* Wisdom (FFTW's word): the performance model's constants measured on this
 * machine (`pyrgrid calibrate`) and the choices of plans made by timing
 * (PYR_PLAN_MEASURE).  The library keeps it in memory, one store per process
 * shared by all threads (guarded by a mutex), and touches files only in these
 * calls: pyr_plan_create reads no file, and records a measured choice in the
 * store only. */

/* Merge the wisdom file at `path` into the store (the file's records win).
 * A missing file imports nothing and is not an error.  A file that is
 * corrupt, of another format version or written on another machine is
 * rejected as a whole with PYR_ERR_FORMAT and a message naming the file and
 * the reason; nothing of it is used, and plans that then fall back to the
 * default constants say why. */
PYR_API pyr_status_t pyr_wisdom_import_file(const char *path);
/* Write the store to `path` (creating its directory), merged with what the
 * file holds at that moment (the store's records win), under an exclusive
 * lock (flock on "PATH.lock", created beside it) and by an atomic rename:
 * processes exporting to the same file at once lose no record.  A file there
 * that is not wisdom of this machine is left as it is and the export fails
 * with PYR_ERR_FORMAT.  A character device or FIFO at `path` is written in
 * place: no lock file beside it and nothing merged. */
PYR_API pyr_status_t pyr_wisdom_export_file(const char *path);
/* Empty the store. */
PYR_API void pyr_wisdom_forget(void);
/* Changes to the store so far: a program compares two readings to learn
 * whether a plan recorded something worth exporting (a PYR_PLAN_MEASURE
 * choice). */
PYR_API unsigned long pyr_wisdom_store_generation(void);
/* pyr_wisdom_import_file of the default file (pyr_wisdom_default_path,
 * written into path[size], empty when there is none), as programs import it
 * before planning; *found: whether the file existed.  A character device or
 * a FIFO there is a sink that exports write in place: nothing is read from
 * it (PYR_OK, *found = 0). */
PYR_API pyr_status_t pyr_wisdom_store_import_default(char *path, size_t size, int *found);
/* pyr_wisdom_import_file, telling whether the file existed. */
PYR_API pyr_status_t pyr_wisdom_store_import(const char *path, int *found);
/* pyr_wisdom_export_file; with replace_rejected, a file there that is not
 * wisdom of this machine is replaced (`pyrgrid calibrate`) instead of
 * failing. */
PYR_API pyr_status_t pyr_wisdom_store_export(const char *path, int replace_rejected);
/* How many sets of model constants and measured choices the wisdom file at
 * `path` holds (0 and 0 when there is none), and the store. */
PYR_API pyr_status_t pyr_wisdom_file_count(const char *path, int *nconstants, int *nchoices);
PYR_API pyr_status_t pyr_wisdom_store_count(int *nconstants, int *nchoices);
/* The store as the text of a wisdom file, in *text (malloc'd: the caller
 * frees it with free()). */
PYR_API pyr_status_t pyr_wisdom_store_text(char **text);
/* What pyr_wisdom_calibrate reports as it goes: `text` is lines (each
 * ending in a newline) as `pyrgrid calibrate` prints them.  The first call
 * comes before anything is measured, with done = 0, total the number of sets
 * to measure and the backend and device in text; then one after each set is
 * measured and in the store, with done = the sets measured so far and what
 * was measured in text (the constants, the pass of cubes or why none ran,
 * the long-vector method's constants).  Return non-zero to stop before the
 * next set: the call then returns PYR_ERR_CANCELLED and the sets measured
 * so far stay in the store (non-zero at the first call: the arguments are
 * checked and nothing is measured). */
typedef int (*pyr_calibrate_fn)(void *user, int done, int total, const char *text);
/* Measure the performance model's constants on this machine, as `pyrgrid
 * calibrate` does, and put them in the store (pyr_wisdom_export_file saves
 * them): for the backend of `options` (backend, device, threads, and
 * run.kernel's variant; NULL: auto, the default variant), each registered
 * scheme, precision and dimension of the comma-separated lists
 * ("heat,maxwell", "float,double", "2,3"; NULL, "" or "all": every one),
 * about `effort` seconds per set (1 = the program's default; less is quicker
 * and noisier; in (0, 100]).  A set the scheme or the backend does not have
 * (Maxwell's grids are 2D or 3D) is left out; PYR_ERR_ARG when none is left,
 * or for a name not in a list (the message lists the registered schemes).
 * Every set is checked (the kernel variant above all) before the first is
 * measured.  `report` (may be NULL) with `user` is told the progress. */
PYR_API pyr_status_t pyr_wisdom_calibrate(const pyr_options_t *options, const char *schemes, const char *precisions, const char *dims,
                                          double effort, pyr_calibrate_fn report, void *user);
/* Where programs keep wisdom (the pyrgrid program imports and exports it;
 * the library never reads it by itself): $PYRGRID_WISDOM, else
 * $XDG_CACHE_HOME/pyrgrid/wisdom, else $HOME/.cache/pyrgrid/wisdom. */
PYR_API pyr_status_t pyr_wisdom_default_path(char *path, size_t size);

/* ----------------------------------------------------------------- execute */

/* Called between passes with the steps done so far; return non-zero to stop
 * the run: pyr_execute then returns PYR_ERR_CANCELLED, its message states
 * the steps done, and the caller's fields hold that time layer.  Over
 * several devices (run.devices) this hook and the cancel hook are asked in
 * the caller's thread where the parts meet (every exchange height H, and
 * the end), and every part stops at that same step. */
typedef int (*pyr_progress_fn)(void *user, int64_t steps_done, int64_t steps_total);
/* Asked whether to stop, for a caller that must react within about a second
 * (an interrupt): at the end of every pass but the last and, in a resident
 * plan (the naive method, whose one pass may be the whole run), at least
 * about every second within a pass, which is then computed in slices of
 * about a tenth of a second.  Return non-zero to stop as the progress hook
 * does (the fields hold time layer steps_done).  A pass of pieces (the
 * pyramid method) is only ever stopped at its end: before that the host
 * fields hold no single time layer. */
typedef int (*pyr_cancel_fn)(void *user, int64_t steps_done, int64_t steps_total);
/* Called when the field on the host holds time layer `step` (a multiple of
 * options.snapshot_every). */
typedef pyr_status_t (*pyr_snapshot_fn)(void *user, const pyr_field_t *field, int64_t step);

/* Called with every state field of the scheme at a snapshot (Maxwell's six
 * components), fields in the scheme's order (NULL for a field not used). */
typedef pyr_status_t (*pyr_snapshot_fields_fn)(void *user, pyr_field_t *const *fields, int nfields, int64_t step);
/* Called after each pass with the probes' values for steps first .. first +
 * count - 1: values[s * nprobes + p] (the scheme's probes, Maxwell's). */
typedef pyr_status_t (*pyr_probe_fn)(void *user, int64_t first, int64_t count, const double *values, int nprobes);

typedef struct {
    pyr_progress_fn progress;
    pyr_snapshot_fn snapshot;
    void *user;
    pyr_snapshot_fields_fn snapshot_fields; /* (may be NULL) */
    pyr_probe_fn probe;                     /* (may be NULL) */
    pyr_cancel_fn cancel;                   /* (may be NULL) */
} pyr_hooks_t;

/* Advance `field` (which holds time layer 0, or the initial guess) by the
 * problem's steps, in place.  Input fields of the scheme (Poisson's f) are
 * made from the problem (pyr_field_init_input).  counters (may be NULL)
 * receives the values actually moved and computed. */
PYR_API pyr_status_t pyr_execute(pyr_plan_t *plan, pyr_field_t *field, const pyr_hooks_t *hooks,
                         pyr_counters_t *counters);

/* What a run did. */
typedef struct {
    pyr_counters_t counts;
    int64_t steps;     /* steps (sweeps) done: the problem's steps, or fewer when a check stopped the run */
    int checked;       /* the scheme measured its change (Poisson): change and converged are set */
    double change;     /* max-norm of the change made by the last sweep done */
    int converged;     /* change < tolerance at a check (tolerance > 0) */
    /* Runs over several devices or MPI ranks (parts = 1, the rest 0, on one device): */
    int parts;                /* parts the grid was cut into (ranks x devices per rank) */
    int ranks;                /* MPI ranks (1 in one process) */
    int64_t exchange_height;  /* H: steps between halo exchanges */
    int64_t exchanges;        /* halo exchanges done */
    uint64_t halo_sent;       /* values this process's parts sent to other parts (the whole run) */
    uint64_t halo_received;   /* values they received */
    /* How the host grid was reached (pyr_host_memory_t): PIN (registered), STAGE (through
     * pinned buffers: planned so, or registering failed: host_note says why), AUTO where no
     * device copies were made (the CPU backend); the seconds registering and releasing took. */
    pyr_host_memory_t host_memory;
    double pin_seconds, unpin_seconds;
    char host_note[192];
    /* method = multigrid (0 otherwise): the cycles (steps counts them too, change is the relative residual) and their
     * cost in sweeps of the finest grid (smoothing, residuals, transfers and the coarsest level's sweeps, each level's
     * weighted by its interior nodes over the finest's) */
    int64_t mg_cycles;
    double mg_sweeps;
} pyr_run_info_t;

/* The fields of a scheme, in its order: heat "u"; Poisson "u", "f";
 * Maxwell "Ex" .. "Hz", the per-node coefficients "ca", "cb", "dh" (made
 * from the materials: E = ca E + cb curl H, H -= dh curl E) and its CPML
 * auxiliaries (kept by the library: pass NULL).  Name of field i, its role (1 = a
 * state the caller passes and gets back, 0 = a read-only input or an
 * auxiliary), and how many there are. */
PYR_API int pyr_scheme_field_count(pyr_equation_t equation);
PYR_API const char *pyr_scheme_field_name(pyr_equation_t equation, int i);
PYR_API int pyr_scheme_field_updated(pyr_equation_t equation, int i);
/* 1 when field i of the scheme is an input the library makes from the
 * problem (pyr_field_init_input: Poisson's f, Maxwell's ca, cb, dh), 0 for
 * a state and for an auxiliary the library keeps. */
PYR_API int pyr_scheme_field_input(pyr_equation_t equation, int i);
/* Whether a plan for this problem uses field i of its scheme (1), or not
 * (0: pass NULL for it): Maxwell's components of a 2D grid's mode only,
 * its coefficients only where the materials vary, its CPML auxiliaries
 * only with CPML; Poisson's f unless the right-hand side is zero. */
PYR_API int pyr_problem_field_used(const pyr_problem_t *problem, int i);
/* The time step a run of the problem takes: heat's dt; Maxwell's dt, or the
 * one its Courant number gives (dt = courant / sqrt(sum 1/h^2)); 0 for
 * Poisson, which has no time. */
PYR_API pyr_status_t pyr_problem_time_step(const pyr_problem_t *problem, double *dt);

/* Fill state field i of the problem's scheme with its initial values
 * (heat, Poisson: i = 0, as pyr_field_init; Maxwell: a component, from
 * initial.kind: zero, random in [-1, 1), or PREFIX_<component>.npy). */
PYR_API pyr_status_t pyr_field_init_state(pyr_field_t *field, const pyr_problem_t *problem, int i);

/* Fill input field i of the problem's scheme (Poisson's f) from the problem
 * (the right-hand side's kind or file). */
PYR_API pyr_status_t pyr_field_init_input(pyr_field_t *field, const pyr_problem_t *problem, int i);
/* Fill a field of the problem's shape from a file (.npy, or an HDF5
 * result's dataset `dataset`: a snapshot's, as a restart reads it; NULL:
 * the scheme's first field's name), finite values required, errors
 * prefixed "initial.file: ". */
PYR_API pyr_status_t pyr_field_init_file(pyr_field_t *field, const pyr_problem_t *problem, const char *path, const char *dataset);

/* Advance a set of fields, one per field of the scheme in its order (NULL
 * for an input the library should make from the problem), in place.  A run
 * of a scheme with a stopping test ends at the first check that passes; the
 * result and the number of steps depend only on the problem, never on the
 * plan.  run (may be NULL) receives what the run did. */
PYR_API pyr_status_t pyr_execute_fields(pyr_plan_t *plan, pyr_field_t *const *fields, int nfields, const pyr_hooks_t *hooks,
                                pyr_run_info_t *run);
/* Whether runs of the plan take the field where it lies: PYR_OK for a field
 * in host memory, and for one in a GPU's (pyr_field_wrap_device) where the
 * plan computes on it there: a plan of one device that keeps the grid
 * resident (method naive, not plan = refine) on the CUDA backend's GPU that
 * holds it.  Otherwise PYR_ERR_UNSUPPORTED with a message saying why and
 * what would take it; pyr_execute_fields refuses such a field with it. */
PYR_API pyr_status_t pyr_plan_takes_field(const pyr_plan_t *plan, const pyr_field_t *field);
/* What a run did as a JSON object ({"steps": ..., "counts": {...}, "checked":
 * ..., "change": ..., "converged": ...}), snprintf-style. */
PYR_API size_t pyr_run_info_json(const pyr_run_info_t *run, char *text, size_t size);

/* ------------------------------------------------ Maxwell's monitors' spectra */

/* The transforms of a Maxwell problem's monitors (pyr_monitor_t): create them
 * for the problem, attach them to it (or to the problem a plan is made from:
 * the plan's copy points at the same spectra), run, then read them.  Every
 * node's sums come from the one run (device, part) that owns it; a run over
 * MPI ranks holds in each rank's spectra only the nodes the rank owns, zero
 * elsewhere (sum the ranks' values: exactly one term of each is nonzero).
 * Monitors are numbered dft1 .. dftN, then flux1 .. fluxM: m = 0 .. count - 1. */
PYR_API pyr_status_t pyr_spectra_create(const pyr_problem_t *problem, pyr_spectra_t **spectra);
PYR_API void pyr_spectra_destroy(pyr_spectra_t **spectra);
/* Attach spectra made for this problem's monitors (NULL detaches). */
PYR_API pyr_status_t pyr_spectra_attach(pyr_problem_t *problem, pyr_spectra_t *spectra);
PYR_API int pyr_spectra_count(const pyr_spectra_t *spectra);

typedef struct {
    char name[16];         /* "dft1", "flux2" */
    int flux;              /* 1: a flux monitor */
    int ncomponents;       /* the components transformed, in pyr_component_t order (a flux: the plane's tangential ones) */
    int components[6];
    int axis;              /* a plane's normal; -1 for a point or a box */
    int64_t lo[3], hi[3];  /* the nodes transformed (a flux: lo[axis] - 1 .. lo[axis], for H's averages) */
    int64_t nnodes;        /* prod (hi - lo + 1) */
    int nfreq;
    int64_t steps;         /* steps summed (0: no run has finished) */
} pyr_monitor_info_t;
PYR_API pyr_status_t pyr_spectra_info(const pyr_spectra_t *spectra, int m, pyr_monitor_info_t *info);
/* Monitor m's frequencies (nfreq values). */
PYR_API pyr_status_t pyr_spectra_freqs(const pyr_spectra_t *spectra, int m, double *freqs);
/* Monitor m's transforms, re and im each ncomponents x nfreq x nnodes values (nodes x
 * fastest, as the grid: NumPy's (ncomponents, nfreq, nz, ny, nx) in 3D). */
PYR_API pyr_status_t pyr_spectra_dft(const pyr_spectra_t *spectra, int m, double *re, double *im);
/* A flux monitor's power spectrum P(f) (nfreq values), summed over its cells in the grid's order. */
PYR_API pyr_status_t pyr_spectra_flux(const pyr_spectra_t *spectra, int m, double *power);
/* The spectra as CSV: monitor,frequency,flux,re,im - a line per flux monitor and frequency
 * (flux), and per point monitor, component and frequency (re, im; monitor "dft1.Ez");
 * boxes and planes of a dft monitor are left to the HDF5 result and the arrays. */
PYR_API pyr_status_t pyr_spectra_write_csv(const pyr_spectra_t *spectra, const char *path);
/* The flux monitors' power spectra as a line plot with labelled axes (PNG, output.spectra_png): a line per
 * flux monitor, P(f); with reference (the empty run of the two-run recipe: the same monitors and
 * frequencies) P / P0, the transmittance.  width: pixels across (0: 900; 200 .. 8000). */
PYR_API pyr_status_t pyr_spectra_write_png(const pyr_spectra_t *spectra, const char *path, const pyr_spectra_t *reference, int width);
/* The far field of a closed surface (near-to-far-field transform, the surface
 * equivalence principle): surface[0 .. nsurface - 1] are flux monitors (m) that are
 * the faces of one box (3D: six planes, 2D: four lines; a pair per axis, each spanning
 * the box along the other axes), with the same frequencies, after a run of `problem`
 * (the problem the spectra were made for).  The surface and all outside it are taken
 * to be the background medium (eps_r, mu_r; sigma = 0).  Each face's tangential E and H,
 * averaged to its cells' centres as the flux is, give J = n x H and M = -n x E (n the
 * outward normal); for each frequency f and direction d (3D: theta[d] from +z, phi[d]
 * from +x towards +y, radians; 2D: theta NULL, phi[d] in the grid's plane):
 *   power[f * ndir + d]   the power radiated per unit solid angle (2D: per unit angle
 *                         and unit depth), normalised as the flux monitors' P(f), so
 *                         that its integral over the directions is the flux out of the box;
 *   re, im[(f * ndir + d) * 6 + c]   E and H (c: Ex Ey Ez Hx Hy Hz) of the far field at
 *                         distance r > 0 from the grid's node 0, as exp(i omega t)
 *                         phasors of the monitors' transforms.
 * Any of power, re, im may be NULL.  Summed over the faces in the order given and their
 * cells in the grid's order: the same bits whenever the spectra are. */
PYR_API pyr_status_t pyr_spectra_farfield(const pyr_problem_t *problem, const pyr_spectra_t *spectra, int nsurface, const int *surface,
                                          int ndir, const double *theta, const double *phi, double r, double *power, double *re, double *im);

/* -------------------------------------------------------------- discovery */

/* Whether the backend was compiled in and can run here (a CUDA build on a
 * machine without a GPU answers 0 for PYR_BACKEND_CUDA). */
PYR_API int pyr_backend_available(pyr_backend_kind_t kind);
/* Number of usable GPUs, and a one-line description of one
 * ("NVIDIA <name>, 79.1 GiB, compute capability 9.0"). */
PYR_API int pyr_gpu_count(void);
PYR_API pyr_status_t pyr_gpu_describe(int device, char *text, size_t size);
/* Threads the CPU backend uses by default. */
PYR_API int pyr_cpu_threads(void);
/* Seconds on the clock the library times runs and plans with (monotonic;
 * differences only mean anything). */
PYR_API double pyr_seconds_now(void);
/* The kernels compiled in, one per scheme and backend, and a line about
 * kernel i (0 .. count - 1): "heat on cpu: run.kernel = VARIANTS; default
 * 2D V, 3D V" (the variants run.kernel takes), snprintf-style ("" and 0 for
 * an i out of range). */
PYR_API int pyr_kernel_count(void);
PYR_API size_t pyr_kernel_describe(int i, char *text, size_t size);

#include "pyrgrid_lgs.h"

#ifdef __cplusplus
}
#endif

#endif /* PYRGRID_H */
