#!/usr/bin/env bash
# `import rlx` with CUDA tensors, on a GPU machine whose Python is not Debian's (the H200 of the
# device tool: Python 3.12, CUDA torch, pybind11 from pip, no Debian -dev packages).
#
#   python/cuda_check.sh pack OUT.tar.xz   # here, after `make`: librlx_py.so (every rlx library,
#                                          # linked once), its Debian .so's, nlohmann and dlpack headers
#   python/cuda_check.sh run PACK.tar.xz   # there, from the repository root: builds the extension
#                                          # for that Python and runs python/tests/test_cuda.py
set -euo pipefail
mode=$1 pack=$2
if [ "$mode" = pack ]; then
  work=$(mktemp -d)
  d=$work/devpy
  mkdir -p "$d/lib" "$d/include"
  L=build/lib
  g++ -shared -o "$d/librlx_py.so" -Wl,--whole-archive $L/librlx_models.a $L/librlx_frontends.a $L/librlx_train.a $L/librlx_core.a \
    $L/librlx_formats.a $L/librlx_text.a $L/librlx_base.a -Wl,--no-whole-archive \
    /usr/lib/x86_64-linux-gnu/libonnx_proto.so.1 /usr/lib/x86_64-linux-gnu/libprotobuf.so /usr/lib/x86_64-linux-gnu/libopenblas.so \
    /usr/lib/x86_64-linux-gnu/libdnnl.so /usr/lib/x86_64-linux-gnu/libhwy.so /usr/local/cuda/lib/libcudart_static.a \
    /usr/local/cuda/lib/libcublasLt.so /usr/local/cuda/lib/libnvrtc.so /usr/lib/gcc/x86_64-linux-gnu/12/libgomp.so \
    /usr/lib/x86_64-linux-gnu/libz.so /usr/lib/x86_64-linux-gnu/libpcre2-8.so /usr/lib/x86_64-linux-gnu/libutf8proc.so \
    -L/usr/local/cuda/lib -lcudadevrt -ldl -lpthread -lrt
  # the Debian libraries it needs that a non-Debian machine lacks (CUDA's come from there)
  for lib in $(ldd "$d/librlx_py.so" | awk '/=> \/(usr\/)?lib\/x86_64-linux-gnu/ {print $3}'); do
    case $(basename "$lib") in libc.so*|libm.so*|libstdc++*|libgcc_s*|libpthread*|libdl.so*|librt.so*|ld-linux*) ;; *) cp -L "$lib" "$d/lib/" ;; esac
  done
  cp -r /usr/include/nlohmann /usr/include/dlpack "$d/include/"
  tar -cJf "$pack" -C "$work" devpy
  rm -rf "$work"
  ls -la "$pack"
  exit 0
fi
root=$PWD
work=$(mktemp -d)
tar -xJf "$pack" -C "$work"
d=$work/devpy
mkdir -p "$d/rlx"
cp python/rlx/*.py "$d/rlx/"
ext=$(python3 -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
inc=$(python3 -m pybind11 --includes)
for f in python/src/*.cpp; do
  g++ -std=c++20 -O1 -fPIC -c "$f" -Isrc -Iinclude -Ipython/src -I"$d/include" $inc -o "$work/$(basename "$f").o" &
done
wait
g++ -shared -o "$d/rlx/_rlx$ext" "$work"/*.o -L"$d" -lrlx_py -Wl,-rpath,"$d:$d/lib"
cd "$work"
LD_LIBRARY_PATH=$d/lib PYTHONPATH=$d python3 -m pytest -p no:cacheprovider -rs -v "$root/python/tests/test_cuda.py"
