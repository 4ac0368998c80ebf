// The kernels' instruction-set paths this CPU runs (kernels/weight_matrix.h), for tests
// that check every path.
#pragma once

#include "kernels/weight_matrix.h"

#include <vector>

namespace baton::test {

inline std::vector<engine::cpu::Isa> isaPaths() {
    using engine::cpu::Isa;
    std::vector<Isa> out{Isa::Scalar};
    if (int(engine::cpu::bestIsa()) >= int(Isa::Avx2))
        out.push_back(Isa::Avx2);
    if (engine::cpu::bestIsa() == Isa::Avx512)
        out.push_back(Isa::Avx512);
    return out;
}

} // namespace baton::test
