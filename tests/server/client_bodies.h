// The request bodies front ends send (tests/server/client_bodies/, its README says
// where each comes from), for tst_server_requests and tst_server.
#pragma once

#include "test_support.h"

#include <string>

namespace baton::test {

// The body in client_bodies/NAME.json, as the client sends it.
inline std::string clientBody(const char* name) {
    return readFile(QString(BATON_SOURCE_DIR) + "/tests/server/client_bodies/" + name + ".json")
        .toStdString();
}

} // namespace baton::test
