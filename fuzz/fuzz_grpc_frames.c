/* libFuzzer target: HTTP/2 and gRPC frame handling of a server connection
 * (src/grpc). The input is what a client sends (connection preface, then
 * frames); a handler receives every message and echoes its first bytes.
 * Sanitizers catch memory errors; the run must end with every call freed
 * (LeakSanitizer). Seeds: fuzz/corpus/fuzz_grpc_frames/, grpcio clients'
 * bytes captured on a socket. */
#include <stddef.h>
#include <stdint.h>

#include "grpc/grpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  qvi_grpc_fuzz_server(data, size);
  return 0;
}
