#include "util/cpu.h"

uint64_t qvi_path_hits[QV_PATH_COUNT];

static unsigned allowed_mask = QV_CPU_ALL;

unsigned qvi_cpu_features(void) {
  unsigned f = 0;
#ifdef QV_X86_DISPATCH
  /* a load of the CPU model libgcc / compiler-rt fill in at start-up */
  if (__builtin_cpu_supports("avx2")) f |= QV_CPU_AVX2;
  if (__builtin_cpu_supports("popcnt")) f |= QV_CPU_POPCNT;
#endif
  return f & __atomic_load_n(&allowed_mask, __ATOMIC_RELAXED);
}

unsigned qvi_cpu_override(unsigned allowed) {
  return __atomic_exchange_n(&allowed_mask, allowed, __ATOMIC_RELAXED);
}
