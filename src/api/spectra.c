/* pyr_spectra_create, the public entry: the problem is validated here, above
 * the scheme (schemes/maxwell_monitors.c makes the spectra of a valid one). */
#include "core/error.h"
#include "pyrgrid.h"
#include "schemes/maxwell.h"

pyr_status_t pyr_spectra_create(const pyr_problem_t *problem, pyr_spectra_t **spectra)
{
    if (!problem || !spectra) return pyr_fail(PYR_ERR_ARG, "pyr_spectra_create: problem and spectra are required");
    *spectra = NULL;
    if (problem->equation != PYR_EQ_MAXWELL)
        return pyr_fail(PYR_ERR_ARG, "pyr_spectra_create: monitors are the Maxwell scheme's; the problem is %s's",
                        pyr_equation_name(problem->equation));
    PYR_TRY(pyr_problem_validate(problem));
    return pyr_maxwell_spectra_create(problem, spectra);
}
