#include "quiver/version.h"

const char *qv_version(void) { return QV_VERSION_STRING; }

int qv_version_number(void) { return QV_VERSION_NUMBER; }
