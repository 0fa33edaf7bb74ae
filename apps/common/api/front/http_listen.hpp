// The listening socket of the daemon's HTTP front (http_front.cpp start()): the address
// resolved, SO_REUSEADDR only (never SO_REUSEPORT: a second daemon must not share the
// port), bound, listening with the largest backlog. Used by http_front.cpp only.
// Thread: the front's controlling thread, before its I/O threads run.
#pragma once

#include <optional>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "caf/expected.hpp"

namespace mneme::api {

// Opens `acceptor` on host:port (0 = a free port): the bound port, or errc::internal
// naming host and port ("port P is in use", "unknown host", the system's reason), with
// `acceptor` left empty.
caf::expected<int> open_listener(boost::asio::io_context& ioc,
                                 std::optional<boost::asio::ip::tcp::acceptor>& acceptor,
                                 const std::string& host, int port);

} // namespace mneme::api
