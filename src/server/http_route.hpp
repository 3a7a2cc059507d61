// src/server/http_route.hpp: what a route (route.hpp) is handed: the
// connection, taken over from the server, with the request that was read on
// it. Internal to corral (the MCP transport uses it).
#pragma once

#include <boost/beast/http.hpp>
#include <string>

#include "corral/server.hpp"
#include "server/state.hpp"

namespace corral::server {

// HttpConnection: a plain HTTP connection and its first request. The server
// no longer tracks the connection: the route answers on `stream` (on its
// executor, a strand of its own) and closes it.
class HttpConnection {
 public:
  HttpConnection(Stream&& stream, beast::flat_buffer&& buffer,
                 beast::http::request<beast::http::string_body>&& request,
                 std::string remote_address)
      : stream(std::move(stream)),
        buffer(std::move(buffer)),
        request(std::move(request)),
        remote_address(std::move(remote_address)) {}

  Stream stream;
  beast::flat_buffer buffer;  // bytes read past the request
  beast::http::request<beast::http::string_body> request;
  std::string remote_address;  // as in Handshake
  // The request's Origin when it carried one the guard allowed, else empty
  // (a route answering browsers echoes it in Access-Control-Allow-Origin).
  std::string origin;
  // The connection-cap slot: the connection counts against
  // Options::max_connections until this object (or the slot) is gone.
  std::shared_ptr<void> slot;
};

}  // namespace corral::server
