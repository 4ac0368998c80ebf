// A story record with only its title set (the tests' shorthand).
#pragma once

#include <baton/storage/records.h>

#include <string>

inline baton::storage::Story titled(const std::string& title) {
    baton::storage::Story s;
    s.title = title;
    return s;
}
