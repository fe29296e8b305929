/* quiver CLI: exit statuses and error messages (output.h). */
#include "output.h"

#include <stdio.h>

int qv_cli_exit_code(QvStatus status) {
  switch (status) {
    case QV_OK: return QV_EXIT_OK;
    case QV_ENOTSUP: return QV_EXIT_UNSUPPORTED;
    default: return QV_EXIT_INVALID;
  }
}

int qv_cli_fail(const char *cmd, const QvError *error) {
  fprintf(stderr, "quiver %s: %s\n", cmd,
          error->message[0] ? error->message : qv_status_name(error->code));
  return qv_cli_exit_code(error->code);
}
