/* Recursive-descent compiler of formulas into a postfix program. */
#include "solvers/lgs/lgs_expr.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

enum { OP_NUM, OP_X, OP_Z, OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_POW, OP_NEG, OP_FUN };

typedef struct {
    int op;
    double value;
    double (*fun)(double);
} pyr_expr_ins_t;

struct pyr_expr {
    pyr_expr_ins_t *code;
    int len, cap;
    int depth; /* stack depth the program needs */
};

typedef struct {
    const char *text, *p;
    pyr_expr_t *e;
    int sp, max_sp;
    int depth; /* recursion depth of the descent */
    pyr_status_t st;
} parser_t;

static const struct {
    const char *name;
    double (*fun)(double);
} functions[] = {{"sin", sin},   {"cos", cos},   {"tan", tan},   {"exp", exp},
                 {"log", log},   {"sqrt", sqrt}, {"abs", fabs},  {"sinh", sinh},
                 {"cosh", cosh}, {"tanh", tanh}, {"atan", atan}};

static void emit(parser_t *ps, int op, double value, double (*fun)(double))
{
    if (ps->st != PYR_OK) return;
    pyr_expr_t *e = ps->e;
    if (e->len == e->cap) {
        int cap = e->cap ? 2 * e->cap : 16;
        pyr_expr_ins_t *c = realloc(e->code, (size_t)cap * sizeof *c);
        if (!c) {
            ps->st = pyr_fail(PYR_ERR_NOMEM, "out of memory compiling a formula");
            return;
        }
        e->code = c;
        e->cap = cap;
    }
    e->code[e->len++] = (pyr_expr_ins_t){op, value, fun};
    if (op == OP_NUM || op == OP_X || op == OP_Z) {
        if (++ps->sp > ps->max_sp) ps->max_sp = ps->sp;
    } else if (op != OP_NEG && op != OP_FUN) {
        ps->sp--;
    }
}

static void skip_space(parser_t *ps)
{
    while (isspace((unsigned char)*ps->p)) ps->p++;
}

static void syntax(parser_t *ps, const char *expected)
{
    if (ps->st != PYR_OK) return;
    ps->st = pyr_fail(PYR_ERR_CONFIG, "formula \"%s\": expected %s at position %d (\"%.12s\")", ps->text,
                      expected, (int)(ps->p - ps->text) + 1, ps->p);
}

static void parse_sum(parser_t *ps);

/* Every cycle of the descent (a parenthesis, a function's argument, a unary
 * sign, the exponent of '^') passes through parse_unary, which counts it:
 * without a limit, 60000 '(' or 100000 '-' overflowed the stack.  Returns 0 (and
 * fails) when the formula nests deeper than PYR_EXPR_MAX_DEPTH. */
static int enter(parser_t *ps)
{
    if (ps->st != PYR_OK) return 0;
    if (++ps->depth <= PYR_EXPR_MAX_DEPTH) return 1;
    ps->st = pyr_fail(PYR_ERR_CONFIG,
                      "formula \"%.40s...\": nested more than %d levels deep (parentheses, signs or powers) at position %d; "
                      "write it with fewer nested levels",
                      ps->text, PYR_EXPR_MAX_DEPTH, (int)(ps->p - ps->text) + 1);
    return 0;
}

static void parse_primary(parser_t *ps)
{
    skip_space(ps);
    if (ps->st != PYR_OK) return;
    const char *p = ps->p;
    if (*p == '(') {
        ps->p++;
        parse_sum(ps);
        skip_space(ps);
        if (*ps->p != ')') { syntax(ps, "')'"); return; }
        ps->p++;
        return;
    }
    if (isdigit((unsigned char)*p) || *p == '.') {
        char *end;
        double v = strtod(p, &end);
        if (end == p) { syntax(ps, "a number"); return; }
        ps->p = end;
        emit(ps, OP_NUM, v, NULL);
        return;
    }
    if (isalpha((unsigned char)*p)) {
        const char *q = p;
        while (isalnum((unsigned char)*q) || *q == '_') q++;
        size_t len = (size_t)(q - p);
        ps->p = q;
        if (len == 1 && *p == 'x') { emit(ps, OP_X, 0, NULL); return; }
        if (len == 1 && *p == 'z') { emit(ps, OP_Z, 0, NULL); return; }
        if (len == 2 && !strncmp(p, "pi", 2)) { emit(ps, OP_NUM, 3.14159265358979323846, NULL); return; }
        if (len == 1 && *p == 'e') { emit(ps, OP_NUM, 2.71828182845904523536, NULL); return; }
        for (size_t f = 0; f < sizeof functions / sizeof functions[0]; f++) {
            if (strlen(functions[f].name) == len && !strncmp(p, functions[f].name, len)) {
                skip_space(ps);
                if (*ps->p != '(') { syntax(ps, "'(' after a function name"); return; }
                ps->p++;
                parse_sum(ps);
                skip_space(ps);
                if (*ps->p != ')') { syntax(ps, "')'"); return; }
                ps->p++;
                emit(ps, OP_FUN, 0, functions[f].fun);
                return;
            }
        }
        ps->p = p;
        if (ps->st == PYR_OK)
            ps->st = pyr_fail(PYR_ERR_CONFIG,
                              "formula \"%s\": unknown name \"%.*s\" at position %d; known: x, z, pi, e, "
                              "sin, cos, tan, exp, log, sqrt, abs, sinh, cosh, tanh, atan",
                              ps->text, (int)len, p, (int)(p - ps->text) + 1);
        return;
    }
    syntax(ps, "a number, x, z, a function or '('");
}

static void parse_unary(parser_t *ps);

static void parse_power(parser_t *ps)
{
    parse_primary(ps);
    skip_space(ps);
    if (*ps->p == '^') {
        ps->p++;
        parse_unary(ps); /* right associative: 2^-x, 2^3^2 = 2^9 */
        emit(ps, OP_POW, 0, NULL);
    }
}

static void parse_unary(parser_t *ps)
{
    if (!enter(ps)) return;
    skip_space(ps);
    if (*ps->p == '-') {
        ps->p++;
        parse_unary(ps);
        emit(ps, OP_NEG, 0, NULL);
    } else if (*ps->p == '+') {
        ps->p++;
        parse_unary(ps);
    } else {
        parse_power(ps);
    }
    ps->depth--;
}

static void parse_product(parser_t *ps)
{
    parse_unary(ps);
    for (;;) {
        skip_space(ps);
        char c = *ps->p;
        if (ps->st != PYR_OK || (c != '*' && c != '/')) return;
        ps->p++;
        parse_unary(ps);
        emit(ps, c == '*' ? OP_MUL : OP_DIV, 0, NULL);
    }
}

static void parse_sum(parser_t *ps)
{
    parse_product(ps);
    for (;;) {
        skip_space(ps);
        char c = *ps->p;
        if (ps->st != PYR_OK || (c != '+' && c != '-')) break;
        ps->p++;
        parse_product(ps);
        emit(ps, c == '+' ? OP_ADD : OP_SUB, 0, NULL);
    }
}

pyr_status_t pyr_expr_compile(const char *text, pyr_expr_t **expr)
{
    if (!expr) return pyr_fail(PYR_ERR_ARG, "pyr_expr_compile: expr is NULL");
    *expr = NULL;
    if (!text) return pyr_fail(PYR_ERR_ARG, "pyr_expr_compile: text is NULL");
    size_t len = strlen(text);
    if (len > PYR_EXPR_MAX_LENGTH)
        return pyr_fail(PYR_ERR_CONFIG, "formula \"%.40s...\" is %zu characters long; formulas are limited to %d; "
                        "give a long field as an N x M .npy file instead", text, len, PYR_EXPR_MAX_LENGTH);
    pyr_expr_t *e = calloc(1, sizeof *e);
    if (!e) return pyr_fail(PYR_ERR_NOMEM, "out of memory compiling a formula");
    parser_t ps = {text, text, e, 0, 0, 0, PYR_OK};
    parse_sum(&ps);
    skip_space(&ps);
    if (ps.st == PYR_OK && *ps.p) syntax(&ps, "an operator or the end");
    if (ps.st == PYR_OK && e->len == 0) syntax(&ps, "a formula");
    if (ps.st != PYR_OK) {
        pyr_expr_destroy(&e);
        return ps.st;
    }
    e->depth = ps.max_sp;
    *expr = e;
    return PYR_OK;
}

double pyr_expr_eval(const pyr_expr_t *e, double x, double z)
{
    double stack[64], *heap = NULL, *s = stack;
    if (e->depth > 64) {
        heap = malloc((size_t)e->depth * sizeof *heap);
        if (!heap) return NAN;
        s = heap;
    }
    int sp = 0;
    for (int n = 0; n < e->len; n++) {
        const pyr_expr_ins_t *in = &e->code[n];
        switch (in->op) {
        case OP_NUM: s[sp++] = in->value; break;
        case OP_X: s[sp++] = x; break;
        case OP_Z: s[sp++] = z; break;
        case OP_NEG: s[sp - 1] = -s[sp - 1]; break;
        case OP_FUN: s[sp - 1] = in->fun(s[sp - 1]); break;
        case OP_ADD: sp--; s[sp - 1] = s[sp - 1] + s[sp]; break;
        case OP_SUB: sp--; s[sp - 1] = s[sp - 1] - s[sp]; break;
        case OP_MUL: sp--; s[sp - 1] = s[sp - 1] * s[sp]; break;
        case OP_DIV: sp--; s[sp - 1] = s[sp - 1] / s[sp]; break;
        case OP_POW: sp--; s[sp - 1] = pow(s[sp - 1], s[sp]); break;
        }
    }
    double v = s[0];
    free(heap);
    return v;
}

void pyr_expr_destroy(pyr_expr_t **expr)
{
    if (!expr || !*expr) return;
    free((*expr)->code);
    free(*expr);
    *expr = NULL;
}
