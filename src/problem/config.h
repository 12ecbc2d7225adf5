/* Problem files (INI, read by io/ini.h) and --set overrides. */
#ifndef PYR_PROBLEM_CONFIG_H
#define PYR_PROBLEM_CONFIG_H

#include "pyrgrid.h"

typedef struct {
    pyr_problem_t problem;
    pyr_options_t options;
    int64_t rows;  /* [run] rows: device extent of a strip/slab/segment */
    int64_t block; /* [run] block: side of a block */
    char field[PYR_PATH_MAX];  /* [output] field */
    char image[PYR_PATH_MAX];  /* [output] image */
    int64_t every;             /* [output] every */
    char source[PYR_PATH_MAX]; /* the file it came from */
    int n_given;               /* bit d: grid.n{x,y,z} was given */
    unsigned given;            /* PYR_GIVEN_*: which schemes' keys were given */
    double dt;                 /* [scheme] dt: the heat equation's or Maxwell's, by the equation */
    char probes[PYR_PATH_MAX]; /* [output] probes: Maxwell's probe series (CSV) */
    char spectra[PYR_PATH_MAX]; /* [output] spectra: Maxwell's monitors' spectra (CSV) */
    char spectra_png[PYR_PATH_MAX]; /* [output] spectra_png: a plot of Maxwell's flux spectra (PNG) */
    int image_component;       /* [output] component: Maxwell's field in the image (-1: the mode's default) */
    int compression;           /* [output] compression: gzip level of HDF5 outputs (0 = none) */
    /* restarts (problem/restart.h): the step and time initial.file holds */
    int64_t start_step;        /* [initial] step, or the HDF5 file's; 0 = a fresh start */
    double start_t;            /* [initial] t, or the HDF5 file's (heat: default start_step * dt) */
    unsigned start_given;      /* PYR_GIVEN_START_*: which of them the file or --set gave */
    int64_t end_step;          /* the run ends at this step: scheme.steps (pyr_config_finish_inputs sets it;
                                  problem.steps becomes the steps that remain) */
    char start_dataset[128];   /* HDF5 initial.file: the dataset read ("u", or a snapshot's) */
    int image_width;           /* [output] image_width: pixels across the images (0: each image's default) */
    int colormap;              /* [output] colormap: pyr_colormap_t of the heat map (default auto) */
    char probes_png[PYR_PATH_MAX]; /* [output] probes_png: a plot of Maxwell's probe series (PNG) */
} pyr_config_t;

enum {
    PYR_GIVEN_HEAT = 1,       /* alpha */
    PYR_GIVEN_POISSON = 2,    /* iterations, tolerance, check_every, omega, [rhs] */
    PYR_GIVEN_ITERATIONS = 4,
    PYR_GIVEN_MAXWELL = 8,    /* courant, mode, [boundary], [material], [source], [probe], [monitor], output.probes, output.probes_png, output.spectra, output.component */
    PYR_GIVEN_DT = 16,
    PYR_GIVEN_STEPS = 32,
    PYR_GIVEN_INIT = 64,      /* initial.kind */
    PYR_GIVEN_DIMS = 128      /* grid.dims (the grid's size may come from initial.file) */
};
enum { PYR_GIVEN_START_STEP = 1, PYR_GIVEN_START_T = 2 };

/* Maxwell's sections and keys (src/problem/config_maxwell.c): sets *handled when
 * the key is one of them. */
pyr_status_t pyr_config_apply_maxwell(pyr_config_t *cfg, const char *sec, const char *key, const char *value, int *handled);

/* The most sweeps of a Poisson problem that gives a tolerance and no iterations. */
#define PYR_CONFIG_POISSON_ITERATIONS 1000000

/* Defaults of a problem file with nothing in it. */
void pyr_config_default(pyr_config_t *cfg);
/* Read a problem file over the current contents.  Unknown sections and keys
 * and malformed values are errors naming the file, line and a likely fix. */
pyr_status_t pyr_config_load(pyr_config_t *cfg, const char *path);
/* The same from text in memory (`source` names it in messages). */
pyr_status_t pyr_config_load_text(pyr_config_t *cfg, const char *text, size_t len, const char *source);
/* Apply one key of a section, as a problem file line would (the public
 * setters of problem/keys.c use it). */
pyr_status_t pyr_config_apply(pyr_config_t *cfg, const char *section, const char *key, const char *value);
/* Apply one "section.key=value" override. */
pyr_status_t pyr_config_set(pyr_config_t *cfg, const char *assignment);
/* Check what can only be checked once every key is read (keys of another
 * scheme, a Poisson problem's stopping rule) and copy rows/block/every into
 * the options for the chosen decomposition. */
pyr_status_t pyr_config_finish(pyr_config_t *cfg);

#endif
