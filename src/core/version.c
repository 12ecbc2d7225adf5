/* The version of the library that is running, which may differ from the
 * PYR_VERSION_STRING a program was compiled against. */
#include "pyrgrid.h"

const char *pyr_version(void) { return PYR_VERSION_STRING; }
