# Sourced by the scripts/device-*.sh from the repository root: the GPU machine's build and
# run environment, written once. Nothing can be installed there: the .deb files that
# scripts/fetch-device-debs.sh carries in .deb/ (libsqlite3-dev, libxgboost-dev, libzstd-dev
# and what they need) are unpacked into a private prefix. Sets
#   device_prefix            the prefix (/tmp/dragon-prefix)
#   device_torch_prefix      PyTorch's CMake prefix (libtorch), empty without PyTorch
#   device_cmake_args        CMake arguments that find the prefix's packages
#   device_cmake_args_torch  the same, and libtorch
# and exports LD_LIBRARY_PATH with the prefix's libraries, and DRAGON_CUDNN_LIBRARY (cuDNN
# of PyTorch's wheels, outside the loader's path: src/bench/cudnn_api.cc) unless it is set.
device_prefix=/tmp/dragon-prefix
if compgen -G ".deb/*.deb" >/dev/null; then
  mkdir -p "$device_prefix"
  for deb in .deb/*.deb; do dpkg -x "$deb" "$device_prefix"; done
fi
export LD_LIBRARY_PATH="$device_prefix/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
device_torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null || true)
device_cmake_args=(-DCMAKE_PREFIX_PATH="$device_prefix/usr" -DCMAKE_INCLUDE_PATH="$device_prefix/usr/include"
  -DCMAKE_LIBRARY_PATH="$device_prefix/usr/lib/x86_64-linux-gnu")
device_cmake_args_torch=(-DCMAKE_PREFIX_PATH="${device_torch_prefix:+$device_torch_prefix;}$device_prefix/usr"
  -DCMAKE_INCLUDE_PATH="$device_prefix/usr/include" -DCMAKE_LIBRARY_PATH="$device_prefix/usr/lib/x86_64-linux-gnu")
if [ -z "${DRAGON_CUDNN_LIBRARY:-}" ]; then
  for device_site in $(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null); do
    device_cudnn=$(find "$device_site/nvidia" -name 'libcudnn.so.9' 2>/dev/null | head -n 1)
    [ -n "$device_cudnn" ] && { export DRAGON_CUDNN_LIBRARY=$device_cudnn; break; }
  done
fi
