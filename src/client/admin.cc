#include "client/admin.hpp"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <stdexcept>

namespace corral::client {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr auto kRequestDeadline = std::chrono::seconds(5);

}  // namespace

AdminResponse admin_request(const std::string& host, std::uint16_t port, std::string_view method,
                            std::string_view path) {
  asio::io_context io;
  beast::tcp_stream stream(io);
  http::request<http::string_body> request{http::string_to_verb(method), std::string(path), 11};
  // An IPv6 literal keeps its brackets in Host (RFC 3986 authority).
  request.set(http::field::host,
              host.find(':') != std::string::npos && host.front() != '[' ? "[" + host + "]" : host);
  request.keep_alive(false);
  http::response<http::string_body> response;
  beast::flat_buffer buffer;
  boost::system::error_code failure;
  std::string step = "connect";
  // One deadline for the whole exchange: a wedged daemon cannot hang us.
  stream.expires_after(kRequestDeadline);
  tcp::resolver resolver(io);
  resolver.async_resolve(
      host, std::to_string(port),
      [&](boost::system::error_code ec, tcp::resolver::results_type results) {
        if (ec) {
          failure = ec;
          return;
        }
        stream.async_connect(results, [&](boost::system::error_code ec, const tcp::endpoint&) {
          if (ec) {
            failure = ec;
            return;
          }
          step = "send";
          http::async_write(stream, request, [&](boost::system::error_code ec, std::size_t) {
            if (ec) {
              failure = ec;
              return;
            }
            step = "read";
            http::async_read(stream, buffer, response,
                             [&](boost::system::error_code ec, std::size_t) { failure = ec; });
          });
        });
      });
  io.run();
  if (failure) {
    throw std::runtime_error("admin listener at " + host + ":" + std::to_string(port) + ": " +
                             step + ": " +
                             (failure == beast::error::timeout
                                  ? std::string("no answer within 5 s") +
                                        (method == "GET" || method == "HEAD"
                                             ? ""
                                             : " (the daemon drops a change whose caller has "
                                               "hung up)")
                                  : failure.message()));
  }
  return {static_cast<int>(response.result_int()), response.body()};
}

}  // namespace corral::client
