#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char last_message[2048];

static const char *const status_text[] = {
#define PYR_X_TEXT(name, text) text,
    PYR_STATUS_LIST(PYR_X_TEXT)
#undef PYR_X_TEXT
};

static const char *const status_names[] = {
#define PYR_X_NAME(name, text) #name,
    PYR_STATUS_LIST(PYR_X_NAME)
#undef PYR_X_NAME
};

const char *pyr_status_string(pyr_status_t status)
{
    if ((int)status < 0 || status >= PYR_STATUS_COUNT) return "unknown status";
    return status_text[status];
}

const char *pyr_status_name(pyr_status_t status)
{
    if ((int)status < 0 || status >= PYR_STATUS_COUNT) return "PYR_UNKNOWN";
    return status_names[status];
}

const char *pyr_last_error(void)
{
    return last_message[0] ? last_message : "no error recorded";
}

void pyr_clear_error(void) { last_message[0] = '\0'; }

pyr_status_t pyr_fail(pyr_status_t status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_message, sizeof last_message, fmt, ap);
    va_end(ap);
    return status;
}

pyr_status_t pyr_fail_context(pyr_status_t status, const char *fmt, ...)
{
    char prefix[512], old[sizeof last_message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, last_message, sizeof old);
    size_t n = strlen(prefix);
    if (n >= sizeof last_message) n = sizeof last_message - 1;
    memcpy(last_message, prefix, n);
    size_t rest = strlen(old);
    if (n + rest >= sizeof last_message) rest = sizeof last_message - 1 - n;
    memcpy(last_message + n, old, rest);
    last_message[n + rest] = '\0';
    return status;
}

size_t pyr_precision_size(pyr_precision_t p) { return p == PYR_DOUBLE ? 8 : 4; }

const char *pyr_precision_name(pyr_precision_t p) { return p == PYR_DOUBLE ? "double" : "float"; }
