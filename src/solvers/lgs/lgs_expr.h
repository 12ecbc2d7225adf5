/* Small arithmetic formulas in x and z for problem files ("1 + 0.5*sin(pi*x)*z").
 * Compiled once to a postfix program, then evaluated per grid node. */
#ifndef PYR_SOLVERS_LGS_EXPR_H
#define PYR_SOLVERS_LGS_EXPR_H

#include "pyrgrid.h"

typedef struct pyr_expr pyr_expr_t;

/* Limits of a formula: its length in characters, and how deep parentheses,
 * unary signs and powers may nest (the parser recurses on each). */
#define PYR_EXPR_MAX_LENGTH 4096
#define PYR_EXPR_MAX_DEPTH 200

/* Compile `text`.  Variables x, z; constants pi, e; binary + - * / ^ (right
 * associative), unary -, parentheses; functions sin cos tan exp log sqrt abs
 * sinh cosh tanh atan.  PYR_ERR_CONFIG names the position and what was
 * expected, or the limit exceeded.  The caller frees the result with pyr_expr_destroy. */
pyr_status_t pyr_expr_compile(const char *text, pyr_expr_t **expr);
double pyr_expr_eval(const pyr_expr_t *expr, double x, double z);
void pyr_expr_destroy(pyr_expr_t **expr);

#endif
