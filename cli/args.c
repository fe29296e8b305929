/* quiver CLI: command-line parsing shared by the commands (args.h). */
#include "args.h"
#include "input.h"
#include "output.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void vusage(const char *cmd, const char *fmt, va_list ap) {
  fprintf(stderr, "quiver %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  /* the help is per command: "tensor from-npy" -> quiver tensor --help */
  size_t n = strcspn(cmd, " ");
  fprintf(stderr, "\nTry 'quiver %.*s --help'.\n", (int)n, cmd);
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vusage(cmd, fmt, ap);
  va_end(ap);
  return QV_EXIT_USAGE;
}

int cli_args_in_out(const QvCliArgs *a, int npos, const char *out) {
  if (a->status) return a->status;
  if (npos != 2) return cli_usage_error(a->cmd, "needs IN and OUT ('-' for stdin, stdout)");
  return out != NULL ? cli_check_output(a->cmd, out) : 0;
}

void cli_args_error(QvCliArgs *a, const char *fmt, ...) {
  if (a->status) return; /* one message per command line */
  va_list ap;
  va_start(ap, fmt);
  vusage(a->cmd, fmt, ap);
  va_end(ap);
  a->status = QV_EXIT_USAGE;
}

void cli_args_init(QvCliArgs *a, const char *cmd, int argc, char **argv) {
  memset(a, 0, sizeof *a);
  a->cmd = cmd;
  a->argc = argc;
  a->argv = argv;
  a->i = -1;
}

bool cli_args_next(QvCliArgs *a) {
  if (a->status) return false;
  a->i++;
  if (!a->options_done && a->i < a->argc && strcmp(a->argv[a->i], "--") == 0) {
    a->options_done = true;
    a->i++;
  }
  if (a->i >= a->argc) return false;
  const char *s = a->argv[a->i];
  a->positional = a->options_done || s[0] != '-' || s[1] == '\0';
  return true;
}

const char *cli_args_positional(QvCliArgs *a) {
  return a->status == 0 && a->positional ? a->argv[a->i] : NULL;
}

bool cli_args_in_out_arg(QvCliArgs *a, const char **pos, int *npos) {
  const char *p = cli_args_positional(a);
  if (p == NULL || *npos >= 2) return false;
  pos[(*npos)++] = p;
  return true;
}

/* The current argument is option `name`, alone or as "name=value". */
static bool is_option(const QvCliArgs *a, const char *name, const char **inline_value) {
  if (a->status || a->positional) return false;
  const char *s = a->argv[a->i];
  size_t n = strlen(name);
  if (strncmp(s, name, n) != 0) return false;
  if (s[n] == '\0') {
    *inline_value = NULL;
    return true;
  }
  if (s[n] != '=') return false;
  *inline_value = s + n + 1;
  return true;
}

bool cli_args_flag(QvCliArgs *a, const char *name) {
  const char *v;
  if (!is_option(a, name, &v)) return false;
  if (v != NULL) {
    cli_args_error(a, "%s takes no value", name);
    return false;
  }
  return true;
}

const char *cli_args_value(QvCliArgs *a, const char *name) {
  const char *v;
  if (!is_option(a, name, &v)) return NULL;
  if (v == NULL) {
    /* "--name value": a value starting with '-' is "-" or a number, so
     * that "--index --stored" reports the missing value */
    const char *next = a->i + 1 < a->argc ? a->argv[a->i + 1] : NULL;
    if (next && (next[0] != '-' || next[1] == '\0' || (next[1] >= '0' && next[1] <= '9')))
      v = a->argv[++a->i];
  }
  if (v == NULL || v[0] == '\0') {
    cli_args_error(a, "%s needs a value", name);
    return NULL;
  }
  return v;
}

int cli_args_choice(QvCliArgs *a, const char *name, const char *const *choices) {
  const char *v;
  if (!is_option(a, name, &v)) return -1;
  /* one message for a missing and a wrong value: both list the choices */
  if (v == NULL && a->i + 1 < a->argc && a->argv[a->i + 1][0] != '-') v = a->argv[++a->i];
  /* ASCII case-insensitive, as the library's parsers (qv_sparse_format_parse)
   * and so the Python module read the same names */
  for (int k = 0; v != NULL && choices[k] != NULL; k++) {
    const char *x = v, *y = choices[k];
    while (*x && *y && ((*x >= 'A' && *x <= 'Z') ? *x | 0x20 : *x) == *y) x++, y++;
    if (*x == 0 && *y == 0) return k;
  }
  char list[256];
  size_t len = 0;
  list[0] = '\0';
  for (int k = 0; choices[k] != NULL && len < sizeof list; k++)
    len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", k ? ", " : "", choices[k]);
  if (v == NULL || v[0] == '\0')
    cli_args_error(a, "%s needs a value: one of %s", name, list);
  else
    cli_args_error(a, "%s: '%s' is not one of %s", name, v, list);
  return -1;
}

bool cli_args_index(QvCliArgs *a, const char *name, int64_t *out) {
  const char *v = cli_args_value(a, name);
  if (v == NULL) return false;
  if (!cli_parse_index(v, out)) {
    cli_args_error(a, "%s: '%s' is not a non-negative integer", name, v);
    return false;
  }
  return true;
}

bool cli_args_quirks(QvCliArgs *a) {
  if (!cli_args_flag(a, "--accept-decimal-overflow")) return false;
  cli_set_accept_decimal_overflow(true);
  return true;
}

bool cli_args_threads(QvCliArgs *a) {
  const char *v = cli_args_value(a, "--threads");
  if (v == NULL) return false;
  int64_t n;
  if (!cli_parse_index(v, &n) || n < 1 || n > QV_RB_MAX_THREADS) {
    cli_args_error(a, "--threads: '%s' is not a number of threads from 1 to %d", v,
                      QV_RB_MAX_THREADS);
    return false;
  }
  cli_set_threads((int)n);
  return true;
}

bool cli_args_no_fsync(QvCliArgs *a) {
  if (!cli_args_flag(a, "--no-fsync")) return false;
  cli_set_no_fsync();
  return true;
}

bool cli_args_output(QvCliArgs *a, int64_t *max_output) {
  return cli_args_size(a, "--max-output", max_output) || cli_args_no_fsync(a);
}

void cli_args_unknown(QvCliArgs *a) {
  if (a->status || a->i >= a->argc) return;
  if (a->positional)
    cli_args_error(a, "unexpected argument '%s'", a->argv[a->i]);
  else
    cli_args_error(a, "unknown option '%s'", a->argv[a->i]);
}

/* "2,0,1": axes below QV_TENSOR_MAX_NDIM, at most that many. */
static bool parse_axis_order(const char *v, QvCliSparseArgs *s) {
  s->n_axis = 0;
  while (*v) {
    if (*v < '0' || *v > '9' || s->n_axis >= QV_TENSOR_MAX_NDIM) return false;
    char *end;
    errno = 0;
    long k = strtol(v, &end, 10);
    if (errno || k >= QV_TENSOR_MAX_NDIM) return false;
    s->axis_order[s->n_axis++] = (int32_t)k;
    if (*end == ',') {
      if (end[1] == '\0') return false;
      end++;
    } else if (*end != '\0') {
      return false;
    }
    v = end;
  }
  return s->n_axis > 0;
}

bool cli_args_sparse(QvCliArgs *a, QvCliSparseArgs *s) {
  static const char *const index_types[] = {"int8",  "int16",  "int32",  "int64", "uint8",
                                            "uint16", "uint32", "uint64", NULL};
  static const char *const csf_lengths[] = {"elements", "bytes", NULL};
  int k;
  const char *v;
  if ((k = cli_args_choice(a, "--index-type", index_types)) >= 0) {
    qv_arrow_type_parse(index_types[k], &s->index_type, NULL);
    return true;
  }
  if ((k = cli_args_choice(a, "--csf-lengths", csf_lengths)) >= 0) {
    s->csf_lengths = k == 0 ? QV_CSF_LENGTHS_ELEMENTS : QV_CSF_LENGTHS_BYTES;
    s->has_csf_lengths = true;
    return true;
  }
  if ((v = cli_args_value(a, "--axis-order")) != NULL) {
    if (parse_axis_order(v, s)) return true;
    cli_args_error(a, "--axis-order: '%s' is not a comma-separated list of axes such as 2,0,1", v);
  }
  return false;
}

bool cli_args_size(QvCliArgs *a, const char *name, int64_t *out) {
  const char *v = cli_args_value(a, name);
  if (v == NULL) return false;
  size_t n = strlen(v);
  int shift = 0;
  char digits[32];
  if (n > 0 && n < sizeof digits) {
    const char *suffixes = "KMGT";
    const char *s = strchr(suffixes, v[n - 1]);
    if (s != NULL && *s != '\0') {
      shift = 10 * (int)(s - suffixes + 1);
      n--;
    }
    memcpy(digits, v, n);
    digits[n] = '\0';
  }
  int64_t x;
  if (n == 0 || n >= sizeof digits || !cli_parse_index(digits, &x) || x == 0 ||
      x > (INT64_MAX >> shift)) {
    cli_args_error(a, "%s: '%s' is not a size in bytes (a positive integer, optionally "
                         "followed by K, M, G or T)", name, v);
    return false;
  }
  *out = x << shift;
  return true;
}

bool cli_sparse_args_given(const QvCliSparseArgs *s) {
  return s->index_type != QV_ARROW_NONE || s->n_axis > 0 || s->has_csf_lengths;
}

const char *cli_args_one_file(const char *cmd, int argc, char **argv, int *status) {
  QvCliArgs a;
  cli_args_init(&a, cmd, argc, argv);
  const char *path = NULL, *p;
  while (cli_args_next(&a)) {
    if ((p = cli_args_positional(&a)) != NULL && path == NULL)
      path = p;
    else
      cli_args_unknown(&a);
  }
  if (a.status == 0 && path == NULL) cli_args_error(&a, "needs a FILE ('-' for stdin)");
  *status = a.status;
  return a.status ? NULL : path;
}

bool cli_parse_index(const char *s, int64_t *out) {
  if (s == NULL || *s < '0' || *s > '9') return false;
  errno = 0;
  char *end;
  long long v = strtoll(s, &end, 10);
  if (errno != 0 || *end != '\0' || v < 0) return false;
  *out = v;
  return true;
}

bool cli_wants_help(int argc, char **argv) {
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0) return false;
    if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) return true;
  }
  return false;
}
