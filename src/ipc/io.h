/* File-descriptor helpers shared by the readers and writers of src/ipc/. */
#ifndef QUIVER_IPC_IO_H
#define QUIVER_IPC_IO_H

#include <stddef.h>
#include <stdint.h>

#include "quiver/buffer.h"
#include "quiver/error.h"

/* Maps a regular file read-only. *owner (one reference, to release) unmaps
 * it; an empty file gives *data == NULL, *size == 0. */
QvStatus qv_io_map_file(const char *path, const uint8_t **data, size_t *size, QvOwner **owner,
                        QvError *error);

/* write(2) until all n bytes are written (retrying EINTR). */
QvStatus qv_io_write_all(int fd, const void *buf, size_t n, QvError *error);

#endif
