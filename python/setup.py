"""Builds quiver's Python module with the library compiled in.

    pip install ./python --no-build-isolation

works offline with Debian's pip and setuptools (python3-pip,
python3-setuptools, python3-dev, python3-numpy, libdlpack-dev and the
library's own -dev packages: liblz4, libzstd, libjansson, libdeflate,
libnghttp2, libssl).
The library's C sources are taken from the repository around this folder.
"""
import glob
import os
import subprocess

import numpy
from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PACKAGES = ["liblz4", "libzstd", "jansson", "libdeflate", "libnghttp2", "openssl"]


def pkg_config(flag):
    try:
        out = subprocess.run(["pkg-config", flag] + PACKAGES, check=True, capture_output=True,
                             text=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        out = []
    return out


def version():
    fields = {}
    with open(os.path.join(ROOT, "include", "quiver", "version.h")) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and parts[0] == "#define" and parts[1] in (
                    "QV_VERSION_MAJOR", "QV_VERSION_MINOR", "QV_VERSION_PATCH"):
                fields[parts[1]] = parts[2]
    return "{}.{}.{}".format(fields["QV_VERSION_MAJOR"], fields["QV_VERSION_MINOR"],
                             fields["QV_VERSION_PATCH"])


# Every folder of src/, as the top CMakeLists.txt compiles them all.
layers = sorted(d for d in os.listdir(os.path.join(ROOT, "src"))
                if os.path.isdir(os.path.join(ROOT, "src", d)))
# The module's own files, one per concept (src/qvpy.h has the map); the
# CMake build lists the same.
MODULE_SOURCES = ["quiver_module.c", "errors.c", "values.c", "io.c", "tensor.c", "sparse.c", "records.c",
                  "table_tensor.c", "tensor_column.c", "sparse_column.c", "flight.c", "dlpack.c",
                  "batch.c", "npy.c", "json.c", "device.c",
                  "validate.c", "cast.c"]
sources = [os.path.join("src", f) for f in MODULE_SOURCES]
for layer in layers:
    sources += sorted(os.path.relpath(p, HERE) for p in glob.glob(os.path.join(ROOT, "src", layer, "*.c")))

cflags = [f for f in pkg_config("--cflags") if f.startswith("-I")]
libs = pkg_config("--libs") or ["-llz4", "-lzstd", "-ljansson", "-ldeflate", "-lnghttp2", "-lssl",
                                "-lcrypto", "-lpthread", "-lm"]

# The rest of the metadata is pyproject.toml's [project]; the version is
# dynamic there and comes from the C header here.
setup(
    version=version(),
    ext_modules=[Extension(
        "quiver._quiver",
        sources=sources,
        include_dirs=[os.path.join(ROOT, "include"), os.path.join(ROOT, "src"), numpy.get_include()],
        define_macros=[("_POSIX_C_SOURCE", "200809L")],
        extra_compile_args=["-std=c11"] + [f for f in cflags],
        extra_link_args=libs + ["-lm"],
    )],
)
