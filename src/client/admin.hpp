// src/client/admin.hpp: the admin listener's client, for `corral status`
// and `corral maintenance` (the listener is src/daemon/admin.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace corral::client {

// What an admin route answered.
struct AdminResponse {
  int status = 200;
  std::string body;  // JSON
};

// A GET/PUT/DELETE to an admin listener with a 5 s deadline. Throws
// std::runtime_error saying what failed (connect, deadline, ...).
AdminResponse admin_request(const std::string& host, std::uint16_t port, std::string_view method,
                            std::string_view path);

}  // namespace corral::client
