/* TCP and TLS for the gRPC connections (transport.h). */
#include "grpc/transport.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const unsigned char ALPN_H2[] = {2, 'h', '2'};

static void ssl_error(QvError *error, const char *what) {
  unsigned long e = ERR_get_error();
  char buf[256] = "";
  if (e) ERR_error_string_n(e, buf, sizeof buf);
  ERR_clear_error();
  qv_error_set(error, QV_EIO, "%s: %s", what, buf[0] ? buf : "TLS failure");
}

static int remaining_ms(int64_t deadline) {
  int64_t left = deadline - qvi_grpc_now_ms();
  if (left < 0) return 0;
  return left > 1000000 ? 1000000 : (int)left;
}

static bool wait_fd(int fd, short events, int64_t deadline) {
  struct pollfd p = {.fd = fd, .events = events};
  for (;;) {
    int ms = remaining_ms(deadline);
    if (ms == 0) return false;
    int r = poll(&p, 1, ms);
    if (r > 0) return true;
    if (r < 0 && errno != EINTR) return false;
  }
}

static void set_socket_options(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  int fl = fcntl(fd, F_GETFL);
  fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* Runs the TLS handshake on a non-blocking socket until the deadline. */
static QvStatus handshake(QviTransport *t, bool client, int64_t deadline, QvError *error) {
  SSL *ssl = t->ssl;
  for (;;) {
    int r = client ? SSL_connect(ssl) : SSL_accept(ssl);
    if (r == 1) break;
    int e = SSL_get_error(ssl, r);
    short ev = e == SSL_ERROR_WANT_READ ? POLLIN : e == SSL_ERROR_WANT_WRITE ? POLLOUT : 0;
    if (ev == 0) {
      long v = SSL_get_verify_result(ssl);
      if (client && v != X509_V_OK)
        return qv_error_set(error, QV_EIO, "TLS: certificate verification failed: %s",
                            X509_verify_cert_error_string(v));
      ssl_error(error, "TLS handshake");
      return QV_EIO;
    }
    if (!wait_fd(t->fd, ev, deadline))
      return qv_error_set(error, QV_EIO, "TLS handshake: timed out");
  }
  const unsigned char *proto = NULL;
  unsigned len = 0;
  SSL_get0_alpn_selected(ssl, &proto, &len);
  if (len != 2 || memcmp(proto, "h2", 2) != 0)
    return qv_error_set(error, QV_EIO, "TLS: the peer did not agree to HTTP/2 (ALPN h2)");
  return QV_OK;
}

QvStatus qvi_transport_connect(QviTransport *t, const char *host, int port, const QviGrpcTls *tls,
                               int64_t deadline, QvError *error) {
  memset(t, 0, sizeof *t);
  t->fd = -1;
  char service[16];
  snprintf(service, sizeof service, "%d", port);
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
  struct addrinfo *res = NULL;
  int gr = getaddrinfo(host, service, &hints, &res);
  if (gr != 0)
    return qv_error_set(error, QV_EIO, "cannot resolve %s: %s", host, gai_strerror(gr));
  int last = 0;
  for (struct addrinfo *a = res; a && t->fd < 0; a = a->ai_next) {
    int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      last = errno;
      continue;
    }
    set_socket_options(fd);
    int r = connect(fd, a->ai_addr, a->ai_addrlen);
    if (r < 0 && errno == EINPROGRESS) {
      int soerr = ETIMEDOUT;
      socklen_t sl = sizeof soerr;
      if (wait_fd(fd, POLLOUT, deadline)) getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
      r = soerr ? -1 : 0;
      errno = soerr;
    }
    if (r == 0) {
      t->fd = fd;
    } else {
      last = errno;
      close(fd);
    }
  }
  freeaddrinfo(res);
  if (t->fd < 0)
    return qv_error_set(error, QV_EIO, "cannot connect to %s:%d: %s", host, port, strerror(last));
  if (!tls || !tls->enabled) return QV_OK;
  SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == NULL) {
    ssl_error(error, "TLS");
    qvi_transport_close(t);
    return QV_EIO;
  }
  t->ssl_ctx = ctx;
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
  int ok = tls->ca_file ? SSL_CTX_load_verify_locations(ctx, tls->ca_file, NULL)
                        : SSL_CTX_set_default_verify_paths(ctx);
  if (ok != 1) {
    ssl_error(error, tls->ca_file ? "TLS: cannot load the CA file" : "TLS: no system CAs");
    if (tls->ca_file) qv_error_prefix(error, "%s", tls->ca_file);
    qvi_transport_close(t);
    return QV_EIO;
  }
  SSL_CTX_set_alpn_protos(ctx, ALPN_H2, sizeof ALPN_H2);
  SSL *ssl = SSL_new(ctx);
  if (ssl == NULL) {
    ssl_error(error, "TLS");
    qvi_transport_close(t);
    return QV_EIO;
  }
  t->ssl = ssl;
  const char *name = tls->server_name ? tls->server_name : host;
  SSL_set_tlsext_host_name(ssl, name);
  /* an IP address is checked against the certificate's IP entries */
  X509_VERIFY_PARAM *param = SSL_get0_param(ssl);
  ASN1_OCTET_STRING *ip = a2i_IPADDRESS(name);
  if (ip) {
    ASN1_OCTET_STRING_free(ip);
    X509_VERIFY_PARAM_set1_ip_asc(param, name);
  } else {
    SSL_set1_host(ssl, name);
  }
  SSL_set_fd(ssl, t->fd);
  QvStatus st = handshake(t, true, deadline, error);
  if (st) {
    qv_error_prefix(error, "%s:%d", host, port);
    qvi_transport_close(t);
  }
  return st;
}

static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned inlen, void *arg) {
  (void)ssl;
  (void)arg;
  for (unsigned i = 0; i < inlen;) {
    unsigned l = in[i];
    if (i + 1 + l > inlen) break;
    if (l == 2 && memcmp(in + i + 1, "h2", 2) == 0) {
      *out = in + i + 1;
      *outlen = 2;
      return SSL_TLSEXT_ERR_OK;
    }
    i += 1 + l;
  }
  return SSL_TLSEXT_ERR_ALERT_FATAL;
}

QvStatus qvi_transport_server_ctx(void **out, const char *cert_file, const char *key_file,
                                  QvError *error) {
  *out = NULL;
  SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == NULL) {
    ssl_error(error, "TLS");
    return QV_EIO;
  }
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  if (SSL_CTX_use_certificate_chain_file(ctx, cert_file) != 1) {
    ssl_error(error, "TLS: cannot load the certificate");
    SSL_CTX_free(ctx);
    return qv_error_prefix(error, "%s", cert_file);
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, key_file, SSL_FILETYPE_PEM) != 1 ||
      SSL_CTX_check_private_key(ctx) != 1) {
    ssl_error(error, "TLS: cannot load the key (or it does not match the certificate)");
    SSL_CTX_free(ctx);
    return qv_error_prefix(error, "%s", key_file);
  }
  SSL_CTX_set_alpn_select_cb(ctx, alpn_select, NULL);
  *out = ctx;
  return QV_OK;
}

void qvi_transport_ctx_free(void *ctx) { SSL_CTX_free(ctx); }

QvStatus qvi_transport_accept(QviTransport *t, int fd, void *ssl_ctx, int64_t deadline,
                              QvError *error) {
  memset(t, 0, sizeof *t);
  t->fd = fd;
  set_socket_options(fd);
  if (ssl_ctx == NULL) return QV_OK;
  SSL *ssl = SSL_new(ssl_ctx);
  if (ssl == NULL) {
    ssl_error(error, "TLS");
    return QV_EIO;
  }
  t->ssl = ssl;
  SSL_set_fd(ssl, fd);
  return handshake(t, false, deadline, error);
}

ssize_t qvi_transport_read(QviTransport *t, void *buf, size_t n, QvError *error) {
  if (t->ssl == NULL) {
    for (;;) {
      ssize_t r = read(t->fd, buf, n);
      if (r > 0) return r;
      if (r == 0) return -1;
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
      qv_error_set(error, QV_EIO, "read: %s", strerror(errno));
      return -2;
    }
  }
  size_t got = 0;
  int r = SSL_read_ex(t->ssl, buf, n, &got);
  if (r == 1) return (ssize_t)got;
  int e = SSL_get_error(t->ssl, r);
  if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) return 0;
  if (e == SSL_ERROR_ZERO_RETURN) return -1;
  if (e == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) return -1; /* EOF without close_notify */
  ssl_error(error, "TLS read");
  return -2;
}

bool qvi_transport_pending(const QviTransport *t) { return t->ssl && SSL_pending(t->ssl) > 0; }

QvStatus qvi_transport_writev(QviTransport *t, struct iovec *iov, int n,
                              bool (*wait)(void *ctx, int fd, short events), void *ctx,
                              QvError *error) {
  int i = 0;
  while (i < n) {
    if (iov[i].iov_len == 0) {
      i++;
      continue;
    }
    short need = 0;
    if (t->ssl == NULL) {
      struct msghdr mh = {.msg_iov = iov + i, .msg_iovlen = (size_t)(n - i)};
      ssize_t w = sendmsg(t->fd, &mh, MSG_NOSIGNAL);
      if (w < 0) {
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
          return qv_error_set(error, QV_EIO, "write: %s", strerror(errno));
        need = POLLOUT;
      } else {
        size_t left = (size_t)w;
        while (i < n && left >= iov[i].iov_len) left -= iov[i++].iov_len;
        if (i < n) {
          iov[i].iov_base = (uint8_t *)iov[i].iov_base + left;
          iov[i].iov_len -= left;
        }
        continue;
      }
    } else {
      size_t done = 0;
      int r = SSL_write_ex(t->ssl, iov[i].iov_base, iov[i].iov_len, &done);
      if (r == 1) {
        iov[i].iov_base = (uint8_t *)iov[i].iov_base + done;
        iov[i].iov_len -= done;
        continue;
      }
      int e = SSL_get_error(t->ssl, r);
      if (e == SSL_ERROR_WANT_WRITE) need = POLLOUT;
      else if (e == SSL_ERROR_WANT_READ) need = POLLIN;
      else {
        ssl_error(error, "TLS write");
        return QV_EIO;
      }
    }
    if (!wait(ctx, t->fd, need))
      return qv_error_set(error, QV_EIO, "write: the peer stopped reading");
  }
  return QV_OK;
}

void qvi_transport_close(QviTransport *t) {
  if (t->ssl) {
    SSL_shutdown(t->ssl);
    SSL_free(t->ssl);
  }
  if (t->ssl_ctx) SSL_CTX_free(t->ssl_ctx);
  if (t->fd >= 0) close(t->fd);
  memset(t, 0, sizeof *t);
  t->fd = -1;
}
