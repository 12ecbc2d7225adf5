#!/usr/bin/env bash
# `cmake --install` puts the library, header and pkg-config file in place, and
# a program builds against them with pkg-config and runs a small problem.
# usage: test_install.sh BUILD_DIR [EXTRA_CFLAGS...]
# (EXTRA_CFLAGS: the sanitizer flags when the library was built with them)
set -eu
build=$1
shift
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig:$prefix/lib64/pkgconfig:$prefix/lib/x86_64-linux-gnu/pkgconfig:${PKG_CONFIG_PATH:-}
test -x "$prefix/bin/pyrgrid"
cat > "$prefix/use.c" <<'C'
#include <pyrgrid.h>
#include <stdio.h>
int main(void)
{
    pyr_problem_t p;
    pyr_problem_default(&p);
    p.n[0] = p.n[1] = 65;
    p.steps = 10;
    pyr_plan_t *plan = NULL;
    pyr_field_t *f = NULL;
    if (pyr_plan_create(&p, NULL, &plan) || pyr_field_create(&p, &f) || pyr_field_init(f, &p) ||
        pyr_execute(plan, f, NULL, NULL)) {
        fprintf(stderr, "%s\n", pyr_last_error());
        return 1;
    }
    printf("installed pyrgrid %s ran a 65x65 problem: u[32][32] = %.6f\n", PYR_VERSION_STRING, ((double *)f->data)[32 * 65 + 32]);
    pyr_field_destroy(&f);
    pyr_plan_destroy(&plan);
    return 0;
}
C
cc -std=c11 "$@" -o "$prefix/use" "$prefix/use.c" $(pkg-config --cflags --libs pyrgrid) -Wl,-rpath,"$(pkg-config --variable=libdir pyrgrid)"
"$prefix/use"
