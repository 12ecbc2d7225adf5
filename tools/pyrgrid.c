/* pyrgrid: the command-line program (thin: parse, call the library, report). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "pyrgrid.h"
#include "pyrgrid_output.h"

static void usage(FILE *out)
{
    fprintf(out,
            "pyrgrid %s - grid equations of difference schemes on GPUs and CPUs,\n"
            "including grids larger than the GPU's memory (the pyramid method)\n"
            "\n"
            "usage:\n"
            "  pyrgrid run FILE [--set section.key=value]...\n"
            "        solve the problem in FILE (INI); write the outputs it names\n"
            "  pyrgrid plan FILE [--set section.key=value]...\n"
            "        print the plan (pieces, passes, memory, values moved) without running\n"
            "  pyrgrid solve FILE [--set section.key=value]...\n"
            "        block-tridiagonal systems by line Gauss-Seidel with the Thomas algorithm\n"
            "  pyrgrid calibrate [--backend cpu|cuda] [--precision float|double|all] [--dims 1,2,3]\n"
            "                    [--scheme heat,poisson|all] [--kernel VARIANT]\n"
            "                    [--threads N] [--device N] [--effort X] [--import FILE] [--export FILE] [--show]\n"
            "        measure the performance model's constants here (seconds) and save them as\n"
            "        wisdom in $PYRGRID_WISDOM or ~/.cache/pyrgrid/wisdom; import/export/show it\n"
            "  pyrgrid sweep FILE [--set ...] [--heights 1:64] [--decomposition strips|blocks|slabs|segments|all]\n"
            "                    [--passes P] [--repeat K] [--csv OUT.csv] [--png OUT.png]\n"
            "        run FILE for each pyramid height; measured vs predicted time, model accuracy,\n"
            "        the automatic choice against the best height; P passes per height (0: the file's steps)\n"
            "  pyrgrid sweep FILE --sizes 10:7000[:STEP] [--csv OUT.csv] [--png OUT.png]\n"
            "        the long-vector method (method = longvector, CUDA) over square grids of N interior\n"
            "        nodes per axis: time per step, measured and by the paper's staircase model\n"
            "  pyrgrid sweep --replot SWEEP.csv --png OUT.png\n"
            "        the plot of an earlier sweep, from its CSV\n"
            "  pyrgrid frames [--config FILE] [--set frames.key=value]... [options] INPUT...\n"
            "        shifts, temporal whitening and detection of faint movers in FITS/.npy frame\n"
            "        sequences (pyrgrid frames --help)\n"
            "  mpirun -np P pyrgrid run FILE [--set ...]\n"
            "        one grid over P MPI ranks: each writes its part (NAME.rankNNNN.npy), rank 0 an index\n"
            "  pyrgrid assemble INDEX.parts.json OUT.npy\n"
            "        one .npy from the parts of an MPI run\n"
            "  pyrgrid info       version, backends, GPUs, threads, the kernels of each scheme and their variants\n"
            "  pyrgrid --help     this text (pyrgrid COMMAND --help: that command's)\n"
            "  pyrgrid --version  the version\n"
            "\n",
            PYR_VERSION_STRING);
    pyr_cli_print_common(out);
    fprintf(out,
            "\n"
            "example: pyrgrid run examples/heat2d.ini --set scheme.steps=200 --set output.field=a.npy\n"
            "problem-file reference: README.md\n");
}

static int info(int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        if (pyr_cli_common_option(argv[i])) continue;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: pyrgrid info [-v|-q]\n  The version, the backends compiled in, the GPUs found, the CPU threads.\n");
            pyr_cli_print_common(stdout);
            return PYR_EXIT_OK;
        }
        fprintf(stderr, "pyrgrid: error: unknown argument '%s' for info; see pyrgrid info --help\n", argv[i]);
        return PYR_EXIT_USAGE;
    }
    printf("pyrgrid %s\n", pyr_version());
    printf("backend cpu: available, %d threads (OpenMP)\n", pyr_cpu_threads());
#ifdef PYR_HAVE_CUDA
    int n = pyr_gpu_count();
    if (n == 0) {
        /* why: the CUDA plug-in missing, no driver, or no device (describing GPU 0 says which) */
        char text[256];
        const int known = pyr_gpu_describe(0, text, sizeof text) != PYR_OK;
        printf("backend cuda: compiled in; no usable GPU found%s%s\n", known ? ": " : "", known ? pyr_last_error() : "");
    } else printf("backend cuda: %d GPU%s\n", n, n > 1 ? "s" : "");
    for (int i = 0; i < n; i++) {
        char text[256];
        if (pyr_gpu_describe(i, text, sizeof text) == PYR_OK) printf("  GPU %d: %s\n", i, text);
        else printf("  GPU %d: %s\n", i, pyr_last_error());
    }
#else
    printf("backend cuda: not compiled in (no CUDA compiler at build time)\n");
#endif
    pyr_cli_mpi_describe(stdout);
    /* the kernels registered per scheme and backend, and their variants (run.kernel) */
    for (int i = 0, nk = pyr_kernel_count(); i < nk; i++) {
        char line[512];
        pyr_kernel_describe(i, line, sizeof line);
        printf("kernel %s\n", line);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    /* an interrupted or killed run leaves no temporary output behind */
    pyr_atomic_cleanup_on_signals();
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
        printf("pyrgrid %s\n", pyr_version());
        return 0;
    }
    if (!strcmp(cmd, "info")) return info(argc - 2, argv + 2);
    if (!strcmp(cmd, "run")) return pyr_cli_run(argc - 2, argv + 2);
    if (!strcmp(cmd, "plan")) return pyr_cli_plan(argc - 2, argv + 2);
    if (!strcmp(cmd, "solve")) return pyr_cli_solve(argc - 2, argv + 2);
    if (!strcmp(cmd, "calibrate")) return pyr_cli_calibrate(argc - 2, argv + 2);
    if (!strcmp(cmd, "sweep")) return pyr_cli_sweep(argc - 2, argv + 2);
#ifdef PYR_HAVE_FRAMES
    if (!strcmp(cmd, "frames")) return pyr_cli_frames(argc - 2, argv + 2);
#else
    if (!strcmp(cmd, "frames")) {
        fprintf(stderr, "pyrgrid: error: this build has no frames pipeline (it was configured with -DPYR_WITH_FRAMES=OFF); "
                        "configure with -DPYR_WITH_FRAMES=ON, which needs cfitsio, FFTW and wcslib (apt install libcfitsio-dev "
                        "libfftw3-dev wcslib-dev), and build again\n");
        return 2;
    }
#endif
    if (!strcmp(cmd, "assemble")) return pyr_cli_assemble(argc - 2, argv + 2);
    fprintf(stderr, "pyrgrid: error: unknown command '%s'; the commands are run, plan, solve, calibrate, sweep, frames, assemble, info (see pyrgrid --help)\n", cmd);
    return 2;
}
