# Cross-build for s390x (IBM Z, big-endian) with Debian's gcc-s390x-linux-gnu;
# the tests run under qemu-s390x (Debian's qemu-user). `make test-s390x` uses
# it; `scripts/install-deps.sh s390x` installs the compiler and emulator and
# unpacks the s390x builds of the dependencies into QV_S390X_SYSROOT.
#
# The dependencies live in a private sysroot rather than being installed as
# :s390x packages: Debian 12's security archive no longer builds s390x, so the
# amd64 libraries the host has (libzstd1, libssl3, linux-libc-dev, ...) are
# newer than the s390x ones and Multi-Arch: same refuses to co-install them.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR s390x)
set(CMAKE_C_COMPILER s390x-linux-gnu-gcc)

if(NOT QV_S390X_SYSROOT)
  if(DEFINED ENV{QV_S390X_SYSROOT})
    set(QV_S390X_SYSROOT "$ENV{QV_S390X_SYSROOT}")
  else()
    set(QV_S390X_SYSROOT /opt/quiver-s390x-sysroot)
  endif()
endif()
set(QV_S390X_SYSROOT "${QV_S390X_SYSROOT}" CACHE PATH "s390x dependencies (scripts/install-deps.sh s390x)")
# try_compile projects re-read this file; they need the variable too.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES QV_S390X_SYSROOT)
if(NOT EXISTS "${QV_S390X_SYSROOT}/usr/lib/s390x-linux-gnu/pkgconfig")
  message(FATAL_ERROR "no s390x sysroot at ${QV_S390X_SYSROOT}: run `scripts/install-deps.sh s390x` as root")
endif()

set(_qv_libdirs "${QV_S390X_SYSROOT}/usr/lib/s390x-linux-gnu" "${QV_S390X_SYSROOT}/lib/s390x-linux-gnu")
# The C library comes from the cross compiler's own /usr/s390x-linux-gnu; the
# sysroot only adds the dependencies' headers and libraries (and the libraries
# those need at link time: libzip -> libssl, libbz2, ...).
# Multiarch headers (OpenSSL's opensslconf.h, ...) sit in the triplet directory.
set(CMAKE_C_FLAGS_INIT "-isystem ${QV_S390X_SYSROOT}/usr/include/s390x-linux-gnu -isystem ${QV_S390X_SYSROOT}/usr/include")
set(_qv_ldflags "")
foreach(d ${_qv_libdirs})
  string(APPEND _qv_ldflags " -L${d} -Wl,-rpath-link,${d}")
endforeach()
set(CMAKE_EXE_LINKER_FLAGS_INIT "${_qv_ldflags}")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "${_qv_ldflags}")

# pkg-config answers from the sysroot's .pc files, with the sysroot prefixed.
set(ENV{PKG_CONFIG_LIBDIR} "${QV_S390X_SYSROOT}/usr/lib/s390x-linux-gnu/pkgconfig:${QV_S390X_SYSROOT}/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${QV_S390X_SYSROOT}")
set(ENV{PKG_CONFIG_PATH} "")

# ctest runs every target executable through the emulator, with the guest's
# loader and libc from the cross toolchain and the dependencies from the sysroot.
string(REPLACE ";" ":" _qv_ld_path "${_qv_libdirs}")
find_program(QV_QEMU_S390X qemu-s390x REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR "${QV_QEMU_S390X};-L;/usr/s390x-linux-gnu;-E;LD_LIBRARY_PATH=${_qv_ld_path}")

set(CMAKE_FIND_ROOT_PATH "${QV_S390X_SYSROOT}" /usr/s390x-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
