// Result<T, E>: a value or an error, for the public boundaries of Baton's libraries.
// Exceptions never cross those boundaries; each library names its own error type
// (baton::engine::Error, baton::storage::StorageError, baton::story::Error) and an
// alias Result<T> = baton::Result<T, ThatError>. Result<void, E> carries only
// success or an error.
#pragma once

#include <cassert>
#include <optional>
#include <utility>
#include <variant>

namespace baton {

template <typename T, typename E>
class [[nodiscard]] Result {
public:
    Result(T value)
        : m_v(std::in_place_index<0>, std::move(value)) {}
    Result(E error)
        : m_v(std::in_place_index<1>, std::move(error)) {}

    bool ok() const { return m_v.index() == 0; }
    explicit operator bool() const { return ok(); }

    T& value() & {
        assert(ok());
        return std::get<0>(m_v);
    }
    const T& value() const& {
        assert(ok());
        return std::get<0>(m_v);
    }
    T&& value() && {
        assert(ok());
        return std::get<0>(std::move(m_v));
    }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

    const E& error() const {
        assert(!ok());
        return std::get<1>(m_v);
    }

private:
    std::variant<T, E> m_v;
};

template <typename E>
class [[nodiscard]] Result<void, E> {
public:
    Result() = default;
    Result(E error)
        : m_error(std::move(error)) {}

    bool ok() const { return !m_error.has_value(); }
    explicit operator bool() const { return ok(); }
    const E& error() const {
        assert(!ok());
        return *m_error;
    }

private:
    std::optional<E> m_error;
};

} // namespace baton
