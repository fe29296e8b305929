/* The byte transport under the HTTP/2 session: a TCP socket, optionally
 * TLS (OpenSSL, ALPN "h2"), non-blocking, with writes bounded by a stall
 * timeout. Used by the connection thread alone. */
#ifndef QUIVER_GRPC_TRANSPORT_H
#define QUIVER_GRPC_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "grpc/grpc.h"
#include "quiver/error.h"

typedef struct QviTransport {
  int fd;
  void *ssl;     /* SSL *, NULL for plain TCP */
  void *ssl_ctx; /* SSL_CTX * owned by a client transport */
} QviTransport;

/* A write that makes no progress for this long fails (a peer that stopped
 * reading). */
#define QVI_TRANSPORT_STALL_MS 30000

/* Client: resolves host, connects (every address in turn), TLS handshake
 * with certificate and host name verification when tls->enabled. */
QvStatus qvi_transport_connect(QviTransport *t, const char *host, int port, const QviGrpcTls *tls,
                               int64_t deadline, QvError *error);
/* Server side of an accepted socket: TLS handshake with ctx (NULL: plain). */
QvStatus qvi_transport_accept(QviTransport *t, int fd, void *ssl_ctx, int64_t deadline,
                              QvError *error);
/* Server TLS context from a certificate chain and key (ALPN h2). */
QvStatus qvi_transport_server_ctx(void **ctx, const char *cert_file, const char *key_file,
                                  QvError *error);
void qvi_transport_ctx_free(void *ctx);
/* Up to n bytes: > 0 read, 0 nothing available now, -1 end of input,
 * -2 error (message in error). */
ssize_t qvi_transport_read(QviTransport *t, void *buf, size_t n, QvError *error);
/* Bytes buffered inside TLS that a poll() would not report. */
bool qvi_transport_pending(const QviTransport *t);
/* Writes all of iov[0..n) (the array is advanced in place); `wait` is called (with the stall bound) each
 * time the socket is full, so a caller may drop a lock meanwhile; it
 * returns false to give up. */
QvStatus qvi_transport_writev(QviTransport *t, struct iovec *iov, int n,
                              bool (*wait)(void *ctx, int fd, short events), void *ctx,
                              QvError *error);
void qvi_transport_close(QviTransport *t);

#endif
