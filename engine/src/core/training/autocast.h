// Mixed precision for training on CUDA: inside a Bf16Autocast scope the products run
// in bfloat16 while weights, optimizer state and the loss stay float32 (LibTorch's
// autocast; its C++ API changed between LibTorch 1.13 and 2.x, hidden here).
#pragma once

#include <ATen/autocast_mode.h>
#include <torch/version.h>

namespace baton::engine {

class Bf16Autocast {
public:
    explicit Bf16Autocast(bool on)
        : m_on(on) {
        if (!m_on)
            return;
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
        m_wasOn = at::autocast::is_autocast_enabled(at::kCUDA);
        m_oldType = at::autocast::get_autocast_dtype(at::kCUDA);
        at::autocast::set_autocast_dtype(at::kCUDA, at::kBFloat16);
        at::autocast::set_autocast_enabled(at::kCUDA, true);
#else
        m_wasOn = at::autocast::is_enabled();
        m_oldType = at::autocast::get_autocast_gpu_dtype();
        at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
        at::autocast::set_enabled(true);
#endif
        at::autocast::increment_nesting();
    }
    ~Bf16Autocast() {
        if (!m_on)
            return;
        if (at::autocast::decrement_nesting() == 0)
            at::autocast::clear_cache();
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
        at::autocast::set_autocast_enabled(at::kCUDA, m_wasOn);
        at::autocast::set_autocast_dtype(at::kCUDA, m_oldType);
#else
        at::autocast::set_enabled(m_wasOn);
        at::autocast::set_autocast_gpu_dtype(m_oldType);
#endif
    }
    Bf16Autocast(const Bf16Autocast&) = delete;
    Bf16Autocast& operator=(const Bf16Autocast&) = delete;

private:
    bool m_on = false;
    bool m_wasOn = false;
    at::ScalarType m_oldType = at::kHalf;
};

} // namespace baton::engine
