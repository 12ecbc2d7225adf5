/* pyrgrid: the command-line program (thin: parse, call the library, report). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "pyrgrid.h"

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return 0;
}
