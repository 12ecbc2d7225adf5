/* Sub-commands of the pyrgrid program, one file each under tools/. Each takes
 * the arguments after its name and returns the process exit status. */
#ifndef PYR_TOOLS_CLI_H
#define PYR_TOOLS_CLI_H

int pyr_cli_run(int argc, char **argv);       /* pyrgrid run FILE ...   (cli_run.c)   */
int pyr_cli_plan(int argc, char **argv);      /* pyrgrid plan FILE ...  (cli_run.c)   */
int pyr_cli_solve(int argc, char **argv);     /* pyrgrid solve FILE ... (cli_solve.c) */
int pyr_cli_calibrate(int argc, char **argv); /* pyrgrid calibrate ...  (cli_model.c) */
int pyr_cli_sweep(int argc, char **argv);     /* pyrgrid sweep FILE ... (cli_model.c) */
int pyr_cli_frames(int argc, char **argv);    /* pyrgrid frames INPUT... (cli_frames.c) */

#endif
