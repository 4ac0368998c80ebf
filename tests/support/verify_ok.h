// BATON_VERIFY_OK(result): fails the test, with the error in words, unless a Baton
// Result (engine, storage or story) holds a value. Evaluates its argument once.
#pragma once

#include <QtTest>

#include <string>

namespace baton::test {

// The library's own description where it has one (storage::describe, story::describe,
// found by argument-dependent lookup), else the error's message.
template <typename E>
auto errorText(const E& e, int) -> decltype(describe(e)) {
    return describe(e);
}
template <typename E>
std::string errorText(const E& e, long) {
    return e.message;
}

} // namespace baton::test

#define BATON_VERIFY_OK(expr)                                                                      \
    do {                                                                                           \
        const auto& result_ = (expr);                                                              \
        QVERIFY2(result_.ok(),                                                                     \
                 result_.ok() ? "" : ::baton::test::errorText(result_.error(), 0).c_str());        \
    } while (0)
