// The parts of libtorch's C++ API that src/model uses, in one header: it is precompiled
// for the libtorch translation units (CMakeLists.txt), which otherwise spend most of a
// minute each reading libtorch's headers. Not <torch/torch.h>: data loaders, serialization
// and the JIT are not used. A libtorch header: src/model and its tests only.
#pragma once

#include <ATen/CPUGeneratorImpl.h>
#include <torch/cuda.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/types.h>
#include <torch/utils.h>
#include <torch/version.h>
