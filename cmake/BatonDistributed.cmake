# LibTorch's distributed engine (c10d) for data-parallel training (engine/src/core/
# training/distributed.cpp). Sets BATON_WITH_GLOO and BATON_WITH_NCCL (0 or 1) and
# BATON_GLOO_TARGET (what to link for Gloo, if anything).
#
# Gloo (CPU tensors): LibTorch's own Gloo headers when its include folder has them
# (PyTorch's LibTorch), else Debian's libgloo-dev (Debian's LibTorch links its
# libgloo); the Gloo process group is declared only under USE_C10D_GLOO
# (../shared/docs/platform-notes.md section 12).
# NCCL (CUDA tensors): a CUDA build of LibTorch whose headers have ProcessGroupNCCL.
set(BATON_WITH_GLOO 0)
set(BATON_WITH_NCCL 0)
set(BATON_GLOO_TARGET "")
option(BATON_REQUIRE_DISTRIBUTED "Fail the configuration when Gloo is missing" OFF)

include(CheckCXXSourceCompiles)
# Compiles a program that uses the process group as distributed.cpp does,
# so that a LibTorch whose c10d headers differ turns the backend off instead of
# breaking the build.
# Compiled, not linked: the imported torch target cannot be used in a try_compile (its
# link interface names targets of Torch's own configuration, such as protobuf's).
function(baton_check_c10d result define header class)
  set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
  set(CMAKE_REQUIRED_INCLUDES ${TORCH_INCLUDE_DIRS} ${CUDAToolkit_INCLUDE_DIRS})
  set(CMAKE_REQUIRED_FLAGS "${TORCH_CXX_FLAGS}")
  set(CMAKE_REQUIRED_DEFINITIONS -D${define})
  set(CMAKE_REQUIRED_QUIET ON)
  check_cxx_source_compiles("
#include <torch/csrc/distributed/c10d/${header}>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
int main() {
  c10d::TCPStoreOptions o;
  o.port = 1; o.isServer = true; o.numWorkers = 1; o.waitWorkers = true;
  o.timeout = std::chrono::milliseconds(10);
  auto store = c10::make_intrusive<c10d::TCPStore>(\"127.0.0.1\", o);
  auto options = c10d::${class}::Options::create();
  options->timeout = std::chrono::milliseconds(10);
  auto pg = c10::make_intrusive<c10d::${class}>(store, 0, 1, options);
  std::vector<at::Tensor> t{at::zeros({1})};
  pg->allreduce(t)->wait(std::chrono::milliseconds(10));
  return 0;
}" ${result})
  set(${result} ${${result}} PARENT_SCOPE)
endfunction()

find_path(BATON_TORCH_C10D_DIR torch/csrc/distributed/c10d/ProcessGroupGloo.hpp
          HINTS ${TORCH_INCLUDE_DIRS} NO_CACHE)
if(BATON_TORCH_C10D_DIR)
  find_path(BATON_TORCH_GLOO_DIR gloo/context.h HINTS ${TORCH_INCLUDE_DIRS}
            NO_DEFAULT_PATH NO_CACHE)
  if(BATON_TORCH_GLOO_DIR)
    # PyTorch's LibTorch: its own Gloo, built into libtorch_cpu.
    baton_check_c10d(BATON_TORCH_GLOO_WORKS USE_C10D_GLOO ProcessGroupGloo.hpp ProcessGroupGloo)
    if(BATON_TORCH_GLOO_WORKS)
      set(BATON_WITH_GLOO 1)
    endif()
  else()
    find_package(Gloo CONFIG QUIET)
    if(TARGET gloo)
      set(BATON_WITH_GLOO 1)
      set(BATON_GLOO_TARGET gloo)
    endif()
  endif()
  if(TORCH_CUDA_LIBRARIES OR TARGET torch_cuda)
    find_path(BATON_TORCH_NCCL_DIR torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp
              HINTS ${TORCH_INCLUDE_DIRS} NO_CACHE)
    if(BATON_TORCH_NCCL_DIR)
      baton_check_c10d(BATON_TORCH_NCCL_WORKS USE_C10D_NCCL ProcessGroupNCCL.hpp ProcessGroupNCCL)
      if(BATON_TORCH_NCCL_WORKS)
        set(BATON_WITH_NCCL 1)
      endif()
    endif()
  endif()
endif()
if(NOT BATON_WITH_GLOO AND BATON_REQUIRE_DISTRIBUTED)
  message(FATAL_ERROR "Gloo not found: install libgloo-dev (packaging/install-deps.sh)")
endif()
message(STATUS "Baton: distributed training with Gloo ${BATON_WITH_GLOO}, NCCL ${BATON_WITH_NCCL}")
